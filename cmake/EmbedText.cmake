# cmake -DIN=file.json -DOUT=file.cpp -P EmbedText.cmake: the file's text as
# `const char* interprobe::report::report_schema_text()`, split into raw-string chunks (compilers
# cap one literal's length).
file(READ ${IN} text)
string(LENGTH "${text}" length)
set(body "")
set(offset 0)
while(offset LESS length)
  string(SUBSTRING "${text}" ${offset} 8000 chunk)
  string(APPEND body "R\"schema_text(${chunk})schema_text\"\n")
  math(EXPR offset "${offset} + 8000")
endwhile()
file(WRITE ${OUT}.tmp "// Generated from ${IN} by cmake/EmbedText.cmake. Do not edit.\nnamespace interprobe::report {\nconst char* report_schema_text() {\n  return\n${body};\n}\n}  // namespace interprobe::report\n")
file(COPY_FILE ${OUT}.tmp ${OUT} ONLY_IF_DIFFERENT)
file(REMOVE ${OUT}.tmp)
