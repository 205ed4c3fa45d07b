# Run after linking the threaded module (web/gltrain_js.cmake): GLUE is its .js.
# Emscripten 3.1.6's glue starts its pthread workers with
# `new Worker(new URL("<name>.worker.js", import.meta.url))`, a form bundlers
# follow: Vite then bundles Emscripten's worker script, whose dynamic import()
# its default worker format (iife) refuses, and an app's production build fails
# even where it never loads the threaded build. locateFile() finds the same
# file (next to the glue) in a form bundlers leave alone.
file(READ ${GLUE} text)
get_filename_component(name ${GLUE} NAME_WE)
set(from "new Worker(new URL(\"${name}.worker.js\",import.meta.url))")
string(FIND "${text}" "${from}" at)
if(at EQUAL -1)
  message(FATAL_ERROR "${GLUE}: no '${from}' to rewrite (another Emscripten?)")
endif()
string(REPLACE "${from}" "new Worker(locateFile(\"${name}.worker.js\"))" text "${text}")
file(WRITE ${GLUE} "${text}")
