#include "sim_matmul.hpp"

#include <cmath>
#include <cstring>
#include <map>
#include <mutex>
#include <tuple>
#include <vector>

namespace interprobe::sim {

bool known_element_type(int type) {
  return type == static_cast<int>(ElementType::f32) || type == static_cast<int>(ElementType::f16) ||
         type == static_cast<int>(ElementType::bf16) || type == static_cast<int>(ElementType::fp8_e4m3);
}

int element_bytes(ElementType t) {
  switch (t) {
    case ElementType::f32: return 4;
    case ElementType::f16:
    case ElementType::bf16: return 2;
    case ElementType::fp8_e4m3: return 1;
  }
  return 4;
}

namespace {

float half_to_float(std::uint16_t h) {
  int sign = h >> 15, exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
  float v;
  if (exponent == 0) v = std::ldexp(static_cast<float>(mantissa), -24);
  else if (exponent == 31) v = mantissa ? NAN : INFINITY;
  else v = std::ldexp(static_cast<float>(mantissa | 0x400), exponent - 25);
  return sign ? -v : v;
}

// OCP FP8 E4M3 (what CUDA_R_8F_E4M3 holds): bias 7, no infinity, S.1111.111 is NaN.
float e4m3_to_float(std::uint8_t b) {
  int sign = b >> 7, exponent = (b >> 3) & 0xf, mantissa = b & 0x7;
  float v;
  if (exponent == 0xf && mantissa == 0x7) v = NAN;
  else if (exponent == 0) v = std::ldexp(static_cast<float>(mantissa), -9);
  else v = std::ldexp(static_cast<float>(mantissa | 0x8), exponent - 10);
  return sign ? -v : v;
}

}  // namespace

float to_float(ElementType t, const void* base, std::int64_t index) {
  const auto* bytes = static_cast<const unsigned char*>(base);
  switch (t) {
    case ElementType::f32: {
      float f;
      std::memcpy(&f, bytes + index * 4, 4);
      return f;
    }
    case ElementType::bf16: {
      std::uint16_t h;
      std::memcpy(&h, bytes + index * 2, 2);
      std::uint32_t w = static_cast<std::uint32_t>(h) << 16;
      float f;
      std::memcpy(&f, &w, 4);
      return f;
    }
    case ElementType::f16: {
      std::uint16_t h;
      std::memcpy(&h, bytes + index * 2, 2);
      return half_to_float(h);
    }
    case ElementType::fp8_e4m3: return e4m3_to_float(bytes[index]);
  }
  return 0;
}

namespace {

// op(X) as rows x inner, row-major f32: op(A) is m x k; op(B)^T is n x k, so both dot products
// run over contiguous memory.
std::vector<float> unpack(const Matrix& x, const void* p, bool trans, std::uint64_t rows, std::uint64_t inner,
                          bool rows_are_columns_of_op) {
  std::vector<float> out(rows * inner);
  for (std::uint64_t r = 0; r < rows; ++r)
    for (std::uint64_t i = 0; i < inner; ++i) {
      // Element (row, col) of op(X); op(B) is read transposed (its columns are our rows).
      std::uint64_t op_row = rows_are_columns_of_op ? i : r, op_col = rows_are_columns_of_op ? r : i;
      std::uint64_t stored_row = trans ? op_col : op_row, stored_col = trans ? op_row : op_col;
      out[r * inner + i] = to_float(x.type, p, static_cast<std::int64_t>(stored_col) * x.ld + static_cast<std::int64_t>(stored_row));
    }
  return out;
}

std::uint64_t hash_bytes(const void* p, std::uint64_t bytes) {
  const auto* b = static_cast<const unsigned char*>(p);
  std::uint64_t h = 0xcbf29ce484222325ull;
  std::uint64_t i = 0;
  for (; i + 8 <= bytes; i += 8) {
    std::uint64_t w;
    std::memcpy(&w, b + i, 8);
    h = (h ^ w) * 0x100000001b3ull;
  }
  for (; i < bytes; ++i) h = (h ^ b[i]) * 0x100000001b3ull;
  return h;
}

std::uint64_t span_bytes(const Matrix& x) {
  return (x.cols ? (x.cols - 1) * static_cast<std::uint64_t>(x.ld) + x.rows : 0) * static_cast<std::uint64_t>(element_bytes(x.type));
}

// What a GEMM computed: the problem, and the contents of its inputs.
using Problem = std::tuple<std::uint64_t, std::uint64_t, std::uint64_t, int, bool, bool, float, std::int64_t,
                           std::int64_t, std::int64_t, bool>;
struct Done {
  Problem problem;
  std::uint64_t hash_a = 0, hash_b = 0;
  std::uint64_t epoch = 0;  // the write epoch it was computed in
};
// An input's hash, valid in the write epoch it was taken in.
struct Content {
  std::uint64_t bytes = 0, epoch = 0, hash = 0;
};

void compute(const MatmulJob& j) {
  auto a = unpack(j.a, j.pa, j.trans_a, j.m, j.k, false);
  auto b = unpack(j.b, j.pb, j.trans_b, j.n, j.k, true);
  auto* d = static_cast<float*>(j.pd);
  for (std::uint64_t col = 0; col < j.n; ++col)
    for (std::uint64_t row = 0; row < j.m; ++row) {
      const float* x = &a[row * j.k];
      const float* y = &b[col * j.k];
      // Eight partial sums the compiler can keep in one vector register: the quick plan's
      // 7168 x 4096 weights take seconds on this host otherwise.
      float part[8] = {};
      std::uint64_t i = 0;
      for (; i + 8 <= j.k; i += 8)
        for (int l = 0; l < 8; ++l) part[l] += x[i + static_cast<std::uint64_t>(l)] * y[i + static_cast<std::uint64_t>(l)];
      float sum = ((part[0] + part[1]) + (part[2] + part[3])) + ((part[4] + part[5]) + (part[6] + part[7]));
      for (; i < j.k; ++i) sum += x[i] * y[i];
      float v = j.alpha * sum;
      auto at = static_cast<std::int64_t>(col) * j.d.ld + static_cast<std::int64_t>(row);
      if (j.beta != 0) v += j.beta * to_float(j.c.type, j.pc, static_cast<std::int64_t>(col) * j.c.ld + static_cast<std::int64_t>(row));
      if (j.corrupt) v += static_cast<float>(j.k) * 0.25f;
      d[at] = v;
    }
}

}  // namespace

void run_matmul(const MatmulJob& j) {
  static std::mutex m;
  static std::map<const void*, Done> done;       // by output
  static std::map<const void*, Content> contents; // by input
  bool cacheable = j.beta == 0 && j.write_epoch;
  if (!cacheable) {
    compute(j);
    return;
  }
  std::lock_guard lock(m);
  const std::uint64_t epoch = j.write_epoch();
  auto hash_of = [&](const void* p, std::uint64_t bytes) {
    Content& c = contents[p];
    if (c.bytes != bytes || c.epoch != epoch || c.hash == 0) c = {bytes, epoch, hash_bytes(p, bytes) | 1};
    return c.hash;
  };
  Done now;
  now.problem = {j.m, j.n, j.k, static_cast<int>(j.a.type), j.trans_a, j.trans_b, j.alpha, j.a.ld, j.b.ld, j.d.ld, j.corrupt};
  now.hash_a = hash_of(j.pa, span_bytes(j.a));
  now.hash_b = hash_of(j.pb, span_bytes(j.b));
  now.epoch = epoch;
  auto it = done.find(j.pd);
  if (it != done.end() && it->second.problem == now.problem && it->second.hash_a == now.hash_a &&
      it->second.hash_b == now.hash_b && it->second.epoch == epoch)
    return;
  compute(j);
  // The output changed without the epoch moving: forget what was hashed in its range.
  auto* d = static_cast<const unsigned char*>(j.pd);
  for (auto c = contents.begin(); c != contents.end();) {
    auto* p = static_cast<const unsigned char*>(c->first);
    bool overlaps = p < d + span_bytes(j.d) && d < p + c->second.bytes;
    c = overlaps ? contents.erase(c) : std::next(c);
  }
  done[j.pd] = now;
}

}  // namespace interprobe::sim
