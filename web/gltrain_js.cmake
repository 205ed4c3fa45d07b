# The JavaScript module (web build only), included by the top-level CMakeLists.txt:
#   web/dist/gltrain_wasm.js + .wasm   embind bindings (src/bindings/, one file per area) as an ES module
#                                      whose factory web/gltrain.js wraps
#   web/dist/vendor/                   the pages' charting library (uPlot), copied from
#                                      web/node_modules (installed by scripts/setup.sh)
# src/bindings/ holds the raw classes under web/gltrain.js, which wraps them in the
# documented API (web/gltrain.d.ts): errors.hpp says how errors cross the boundary,
# values.hpp how arguments are read; each other file is one area and registers its own.
set(GLTRAIN_JS_SOURCES errors.cpp values.cpp context.cpp tensor.cpp dataset.cpp sequential.cpp layers.cpp
    training.cpp io.cpp names.cpp)
list(TRANSFORM GLTRAIN_JS_SOURCES PREPEND ${PROJECT_SOURCE_DIR}/src/bindings/)
add_executable(gltrain_js ${GLTRAIN_JS_SOURCES})
target_link_libraries(gltrain_js PRIVATE gltrain::gltrain)
target_compile_options(gltrain_js PRIVATE -Wall -Wextra)
target_link_options(gltrain_js PRIVATE
  --bind -sMODULARIZE=1 -sEXPORT_ES6=1 -sEXPORT_NAME=createGltrainWasm
  -sENVIRONMENT=web,worker -sALLOW_MEMORY_GROWTH=1 -sINITIAL_MEMORY=32MB -sMAXIMUM_MEMORY=4GB
  -sFILESYSTEM=0)
# The threaded variant (GLTRAIN_WEB_THREADS, its own build folder) is
# gltrain_wasm_mt.{js,wasm,worker.js}, beside the single-threaded one: the JS
# entry (gltrain-core.js) loads it where the page is cross-origin isolated.
# Its workers start with the module, one per hardware thread the CPU backend
# may use beside the caller (cpu/thread_pool.hpp: at most kAutoMax = 8 in all),
# so that the pool's threads exist before the first step: a thread started later
# needs the event loop to turn, which a blocked caller would never let happen
# (STRICT=2: such a thread is refused instead, and the pool goes without it).
# At least one: Emscripten 3.1.6 never finishes loading a module whose pool is empty.
if(GLTRAIN_WEB_THREADS)
  target_link_options(gltrain_js PRIVATE
    "-sPTHREAD_POOL_SIZE=Math.max(Math.min(navigator.hardwareConcurrency|0,8)-1,1)" -sPTHREAD_POOL_SIZE_STRICT=2)
  set(GLTRAIN_JS_OUTPUT gltrain_wasm_mt)
else()
  set(GLTRAIN_JS_OUTPUT gltrain_wasm)
endif()
set_target_properties(gltrain_js PROPERTIES
  OUTPUT_NAME ${GLTRAIN_JS_OUTPUT} SUFFIX .js
  RUNTIME_OUTPUT_DIRECTORY ${PROJECT_SOURCE_DIR}/web/dist)
if(GLTRAIN_WEB_THREADS)  # the glue's worker URL, in a form bundlers leave alone (web/pthread_glue.cmake says why)
  add_custom_command(TARGET gltrain_js POST_BUILD
    COMMAND ${CMAKE_COMMAND} -DGLUE=${PROJECT_SOURCE_DIR}/web/dist/${GLTRAIN_JS_OUTPUT}.js
            -P ${PROJECT_SOURCE_DIR}/web/pthread_glue.cmake
    VERBATIM)
endif()

set(GLTRAIN_UPLOT_DIR ${PROJECT_SOURCE_DIR}/web/node_modules/uplot/dist)
add_custom_command(
  OUTPUT ${PROJECT_SOURCE_DIR}/web/dist/vendor/uPlot.esm.js ${PROJECT_SOURCE_DIR}/web/dist/vendor/uPlot.min.css
  COMMAND ${CMAKE_COMMAND} -E make_directory ${PROJECT_SOURCE_DIR}/web/dist/vendor
  COMMAND ${CMAKE_COMMAND} -E copy ${GLTRAIN_UPLOT_DIR}/uPlot.esm.js ${GLTRAIN_UPLOT_DIR}/uPlot.min.css
          ${PROJECT_SOURCE_DIR}/web/dist/vendor/
  COMMAND ${CMAKE_COMMAND} -E copy ${PROJECT_SOURCE_DIR}/web/node_modules/uplot/LICENSE
          ${PROJECT_SOURCE_DIR}/web/dist/vendor/uPlot.LICENSE
  DEPENDS ${PROJECT_SOURCE_DIR}/web/package-lock.json
  COMMENT "Vendoring uPlot into web/dist/vendor (from web/node_modules: run scripts/setup.sh if it is missing)"
  VERBATIM)
add_custom_target(gltrain_web_vendor ALL
  DEPENDS ${PROJECT_SOURCE_DIR}/web/dist/vendor/uPlot.esm.js ${PROJECT_SOURCE_DIR}/web/dist/vendor/uPlot.min.css)
add_dependencies(gltrain_js gltrain_web_vendor)
