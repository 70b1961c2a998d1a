# Embeds a text file in C++ as one raw string literal, at build time:
#
#   cmake -DINPUT=<file> -DOUTPUT=<file.cpp> -DSYMBOL=<ns::Name>
#         -DFROM=<marker> -DDELIMITER=<d> -P TmaEmbedText.cmake
#
# writes OUTPUT defining `extern const char Name[]` in namespace ns, whose
# value is a newline followed by INPUT's text from the first line that starts
# with FROM to the end (what precedes that line is for the file's readers
# only, and may quote FROM). The literal is R"<d>(...)<d>"; a text that
# contains ")<d>"" would end it early, so the script fails instead. GCC and
# Clang take raw strings of any length.
foreach(var INPUT OUTPUT SYMBOL FROM DELIMITER)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "TmaEmbedText.cmake: -D${var}=... is required")
  endif()
endforeach()

file(READ "${INPUT}" text)
string(FIND "\n${text}" "\n${FROM}" from_at)
if(from_at EQUAL -1)
  message(FATAL_ERROR "${INPUT}: no line starting with \"${FROM}\" to embed from")
endif()
string(SUBSTRING "${text}" ${from_at} -1 text)
string(FIND "${text}" ")${DELIMITER}\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${INPUT} contains \")${DELIMITER}\"\", which would end "
                      "the raw string literal: pick another DELIMITER")
endif()

string(REGEX MATCH "^(.*)::([^:]+)$" _ "${SYMBOL}")
set(namespace "${CMAKE_MATCH_1}")
set(name "${CMAKE_MATCH_2}")
if(namespace STREQUAL "" OR name STREQUAL "")
  message(FATAL_ERROR "TmaEmbedText.cmake: SYMBOL must be ns::Name, not ${SYMBOL}")
endif()

# Not configure_file(): it would expand ${...} and @...@ in the text.
set(cpp "// Generated from ${INPUT} by cmake/TmaEmbedText.cmake. Do not edit.\n")
string(APPEND cpp "namespace ${namespace} {\n")
string(APPEND cpp "extern const char ${name}[];\n")
string(APPEND cpp "const char ${name}[] = R\"${DELIMITER}(\n${text})${DELIMITER}\";\n")
string(APPEND cpp "} // namespace ${namespace}\n")

file(WRITE "${OUTPUT}" "${cpp}")
