# Fails when production code includes the test oracle (include/gltrain/reference/):
# a header under include/gltrain/ other than reference/ and reference.hpp, or a
# source of the library, the bindings or the tools. The oracle checks that code,
# so it must not also be part of it.
# Run: cmake -DSOURCE_DIR=<repo> -P tests/production_without_reference.cmake (CTest does).
if(NOT SOURCE_DIR)
  message(FATAL_ERROR "production_without_reference: pass -DSOURCE_DIR=<the repository>")
endif()
file(GLOB_RECURSE files RELATIVE ${SOURCE_DIR}
     ${SOURCE_DIR}/include/gltrain/*.hpp ${SOURCE_DIR}/src/*.hpp ${SOURCE_DIR}/src/*.cpp
     ${SOURCE_DIR}/tools/*.hpp ${SOURCE_DIR}/tools/*.cpp)
list(FILTER files EXCLUDE REGEX "^include/gltrain/reference(/|\\.hpp$)")
list(LENGTH files count)
if(count LESS 50)
  message(FATAL_ERROR "production_without_reference: found only ${count} files under ${SOURCE_DIR}: wrong SOURCE_DIR?")
endif()
set(offenders "")
foreach(f IN LISTS files)
  file(STRINGS ${SOURCE_DIR}/${f} hits REGEX "^[ \t]*#[ \t]*include[ \t]*[<\"]gltrain/reference")
  foreach(h IN LISTS hits)
    string(STRIP "${h}" h)
    string(APPEND offenders "\n  ${f}: ${h}")
  endforeach()
endforeach()
if(offenders)
  message(FATAL_ERROR "production code includes the test oracle (move what it needs to a production header):${offenders}")
endif()
message(STATUS "production_without_reference: ${count} files, none includes gltrain/reference")
