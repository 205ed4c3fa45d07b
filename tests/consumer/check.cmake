# Installs the build tree into a scratch prefix, then configures, builds and
# runs tests/consumer against it with find_package(gltrain).
file(REMOVE_RECURSE ${WORK_DIR})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}/prefix RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "cmake --install failed: ${rc}")
endif()
# WEB=1: configure with emcmake (the Emscripten toolchain); the result is
# linked, not run (running it needs a browser; the smoke page covers that).
set(configure ${CMAKE_COMMAND})
if(WEB)
  set(configure emcmake ${CMAKE_COMMAND})
endif()
execute_process(COMMAND ${configure} -S ${SOURCE_DIR}/tests/consumer -B ${WORK_DIR}/build
                        -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix -DCMAKE_FIND_ROOT_PATH=${WORK_DIR}/prefix
                RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "configuring the consumer against the installed gltrain failed: ${rc}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK_DIR}/build RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "building the consumer failed: ${rc}")
endif()
if(WEB)
  if(NOT EXISTS ${WORK_DIR}/build/consumer.wasm)
    message(FATAL_ERROR "the consumer built but consumer.wasm is missing")
  endif()
else()
  execute_process(COMMAND ${WORK_DIR}/build/consumer RESULT_VARIABLE rc)
  if(rc)
    message(FATAL_ERROR "the consumer ran but failed: ${rc}")
  endif()
endif()
if(TOOLS)  # the command line program (GLTRAIN_BUILD_TOOLS) is installed too, and runs from there
  execute_process(COMMAND ${WORK_DIR}/prefix/bin/gltrain --version RESULT_VARIABLE rc OUTPUT_VARIABLE out)
  if(rc OR NOT out MATCHES "^gltrain [0-9]")
    message(FATAL_ERROR "the installed bin/gltrain --version failed (${rc}): ${out}")
  endif()
endif()
