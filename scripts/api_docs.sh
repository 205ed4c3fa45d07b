#!/usr/bin/env bash
# Builds the API reference, generated from the code's own comments, into build-docs/:
#   build-docs/cpp/index.html  the public C++ headers (Doxygen, docs/api/Doxyfile; the
#                              headers' // comments become documentation through
#                              docs/api/doxygen_filter.py)
#   build-docs/js/index.html   the JavaScript package's types (TypeDoc, web/typedoc.json,
#                              from web/gltrain.d.ts and web/gltrain-vis.d.ts)
# Fails, naming the symbol, when a public symbol has no documentation (Doxygen's
# WARN_AS_ERROR, TypeDoc's validation.notDocumented with treatWarningsAsErrors).
# About 15 s on the 2-core machine. Doxygen and TypeDoc (pinned in web/package-lock.json)
# come from scripts/setup.sh.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$GLTRAIN_ROOT"
rm -rf build-docs/cpp build-docs/js
mkdir -p build-docs/cpp
echo "api_docs: C++ (doxygen $(doxygen --version))"
if ! doxygen docs/api/Doxyfile; then
  echo "api_docs: undocumented C++ API above: add a // comment above each declaration (docs/api/Doxyfile lists the headers)" >&2
  exit 1
fi
echo "api_docs: JavaScript (typedoc)"
if ! (cd web && npx --no-install typedoc --options typedoc.json --logLevel Warn); then
  echo "api_docs: undocumented JavaScript API above: add a /** */ comment in web/*.d.ts" >&2
  exit 1
fi
echo "api_docs: build-docs/cpp/index.html, build-docs/js/index.html"
