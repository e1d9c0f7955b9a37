#pragma once
// Fitting already-escaped text into a terminal's columns: word wrapping and the widths of a table
// whose columns must share the line. Works on display columns (UTF-8 code points), never bytes,
// and knows nothing of colour: callers paint each line after it is laid out.
#include <cstddef>
#include <string>
#include <vector>

namespace interprobe::render {

// Display width of UTF-8 text: code points, so box glyphs and "…" count as one column.
std::size_t display_width(const std::string& s);

// Lines of at most `width` columns, broken at spaces; a word longer than the line is cut.
// Never empty: "" gives one empty line.
std::vector<std::string> wrap_words(const std::string& text, std::size_t width);

// The longest word of `text`, in columns: the narrowest a column can get without cutting words.
std::size_t longest_word(const std::string& text);

// Column widths that fit `available` columns (cells plus the separators the caller adds),
// taking columns from their natural widths down towards their floors, widest first. Empty when
// even the floors do not fit.
std::vector<std::size_t> fit_columns(const std::vector<std::size_t>& natural, const std::vector<std::size_t>& floor,
                                     std::size_t available);

}  // namespace interprobe::render
