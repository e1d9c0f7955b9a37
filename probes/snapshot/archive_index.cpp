#include "probes/snapshot/archive_index.hpp"

#include <stdexcept>

#include <fmt/format.h>

#include "common/text.hpp"

namespace interprobe::snapshot {

namespace {
}

struct ArchiveIndex::Node {
  Kind kind = Kind::directory;
  bool listed = false;  // an entry of its own, not only a parent of one
  std::string name, target;
  Node* parent = nullptr;
  std::unordered_map<std::string, std::unique_ptr<Node>> children;

  // Where this link leads, worked out once (links share prefixes; each is resolved once).
  enum class State { unresolved, resolving, inside, nowhere, outside, loops };
  mutable State state = State::unresolved;
  mutable const Node* leads_to = nullptr;

  std::string path() const {
    return parent && parent->parent ? parent->path() + "/" + name : name;
  }
};

ArchiveIndex::ArchiveIndex(const ArchiveLimits& limits) : limits_(limits), root_(std::make_unique<Node>()) {
  root_->listed = true;
}

ArchiveIndex::~ArchiveIndex() = default;

std::vector<std::string> ArchiveIndex::components(const std::string& path) const {
  if (path.size() > limits_.max_path_bytes)
    throw std::invalid_argument(fmt::format("path longer than {} bytes (the limit)", limits_.max_path_bytes));
  if (path.empty() || path.front() == '/') throw std::invalid_argument("absolute path");
  std::vector<std::string> parts;
  for (auto& p : split(path, '/')) {
    if (p.empty() || p == ".") continue;
    if (p == "..") throw std::invalid_argument("path contains '..'");
    parts.push_back(std::move(p));
  }
  if (parts.size() > limits_.max_depth)
    throw std::invalid_argument(fmt::format("more than {} directories deep (the limit)", limits_.max_depth));
  return parts;
}

void ArchiveIndex::add(const std::vector<std::string>& parts, Kind kind, const std::string& link_target) {
  if (parts.empty()) {
    if (kind != Kind::directory) throw std::invalid_argument("the top directory is not a directory");
    return;
  }
  Node* current = root_.get();
  for (std::size_t i = 0; i < parts.size(); ++i) {
    auto& slot = current->children[parts[i]];
    bool last = i + 1 == parts.size();
    if (!slot) {
      // Implied directories count too: 100,000 entries 64 deep must not become 6.4 million nodes.
      if (++nodes_ > limits_.max_entries)
        throw std::invalid_argument(fmt::format("more than {} entries and directories (the limit)", limits_.max_entries));
      slot = std::make_unique<Node>();
      slot->name = parts[i];
      slot->parent = current;
    } else if (!last && slot->kind != Kind::directory) {
      throw std::invalid_argument(fmt::format("lies below '{}', which is not a directory", slot->path()));
    } else if (last && (slot->listed && !(kind == Kind::directory && slot->kind == Kind::directory))) {
      throw std::invalid_argument("appears twice");
    } else if (last && kind != Kind::directory && !slot->children.empty()) {
      throw std::invalid_argument("other entries lie below it, but it is not a directory");
    }
    current = slot.get();
  }
  current->kind = kind;
  current->listed = true;
  current->target = link_target;
  if (kind == Kind::symlink) links_.push_back(current);
}

// Resolves every link like the kernel will once the archive is extracted under a directory D:
// ".." above the top leaves D; an absolute target leaves D; a missing component, or one
// below a file, ends the walk there (ENOENT/ENOTDIR: nothing is read, nothing leaks).
void ArchiveIndex::check_links() const {
  using State = Node::State;
  // Recursive with depth bounded by kMaxLinkHops; a link is resolved at most once.
  struct Walker {
    const Node* root;
    void resolve(const Node* link, int depth) const {
      if (link->state != State::unresolved) {
        if (link->state == State::resolving) link->state = State::loops;
        return;
      }
      if (depth > kMaxLinkHops) {
        link->state = State::loops;
        return;
      }
      link->state = State::resolving;
      State outcome = walk(link, depth);
      if (link->state != State::loops) link->state = outcome;
    }
    State walk(const Node* link, int depth) const {
      if (link->target.empty() || link->target.front() == '/') return State::outside;
      const Node* at = link->parent;
      auto parts = split(link->target, '/');
      for (std::size_t i = 0; i < parts.size(); ++i) {
        const std::string& part = parts[i];
        if (at->kind == Kind::file) return State::nowhere;  // more path after a file: ENOTDIR
        if (part.empty() || part == ".") continue;
        if (part == "..") {
          if (at == root) return State::outside;
          at = at->parent;
          continue;
        }
        auto child = at->children.find(part);
        if (child == at->children.end()) return State::nowhere;
        const Node* next = child->second.get();
        if (next->kind == Kind::symlink) {
          resolve(next, depth + 1);
          if (next->state != State::inside) return next->state == State::resolving ? State::loops : next->state;
          next = next->leads_to;
        }
        at = next;
      }
      link->leads_to = at;
      return State::inside;
    }
  };
  Walker walker{root_.get()};
  for (const Node* link : links_) {
    walker.resolve(link, 1);
    if (link->state == State::outside)
      throw std::invalid_argument(fmt::format("symlink '{}' -> '{}' leads outside the snapshot", link->path(), link->target));
    if (link->state == State::loops)
      throw std::invalid_argument(fmt::format("symlink '{}' -> '{}' loops or chains more than {} links", link->path(),
                                              link->target, kMaxLinkHops));
  }
}

}  // namespace interprobe::snapshot
