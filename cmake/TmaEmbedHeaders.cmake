# Embeds a directory of headers in C++ at build time, one raw string literal
# per header, so that the tool carries them without an install path:
#
#   cmake -DROOT=<dir> -DOUTPUT=<file.cpp> -DSYMBOL=<ns::Name>
#         -DDELIMITER=<d> -P TmaEmbedHeaders.cmake
#
# reads every ROOT/**/*.h (sorted, so the output is the same everywhere) and
# writes OUTPUT defining `extern const EmbeddedHeader Name[]` in namespace
# ns, each entry {"<path relative to ROOT>", "<its text>"}, then a null
# entry; EmbeddedHeader is {const char *Path; const char *Text;}, declared
# by the reader (driver/CudaHostCode.h). The texts are byte for byte the
# files', so a diagnostic's line in one is the line in the source tree. A
# text that contains ")<d>"" would end its literal early: the script fails.
foreach(var ROOT OUTPUT SYMBOL DELIMITER)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "TmaEmbedHeaders.cmake: -D${var}=... is required")
  endif()
endforeach()
string(REGEX MATCH "^(.*)::([^:]+)$" _ "${SYMBOL}")
set(namespace "${CMAKE_MATCH_1}")
set(name "${CMAKE_MATCH_2}")
if(namespace STREQUAL "" OR name STREQUAL "")
  message(FATAL_ERROR "TmaEmbedHeaders.cmake: SYMBOL must be ns::Name, not ${SYMBOL}")
endif()

file(GLOB_RECURSE FILES RELATIVE "${ROOT}" "${ROOT}/*.h")
list(SORT FILES)
set(cpp "// Generated from ${ROOT} by cmake/TmaEmbedHeaders.cmake. Do not edit.\n")
string(APPEND cpp "#include \"driver/CudaHostCode.h\"\n")
string(APPEND cpp "namespace ${namespace} {\n")
string(APPEND cpp "extern const EmbeddedHeader ${name}[];\n")
string(APPEND cpp "const EmbeddedHeader ${name}[] = {\n")
foreach(file IN LISTS FILES)
  file(READ "${ROOT}/${file}" text)
  string(FIND "${text}" ")${DELIMITER}\"" clash)
  if(NOT clash EQUAL -1)
    message(FATAL_ERROR "${ROOT}/${file} contains \")${DELIMITER}\"\", which "
                        "would end the raw string literal: pick another DELIMITER")
  endif()
  # Not configure_file(): it would expand ${...} and @...@ in the text.
  string(APPEND cpp "  {\"${file}\", R\"${DELIMITER}(${text})${DELIMITER}\"},\n")
endforeach()
string(APPEND cpp "  {nullptr, nullptr}};\n")
string(APPEND cpp "} // namespace ${namespace}\n")
file(WRITE "${OUTPUT}" "${cpp}")
