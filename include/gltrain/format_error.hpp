// Errors of the file readers and writers (IDX, safetensors).
#pragma once
#include "gltrain/error.hpp"

namespace gltrain {

// A file or buffer is malformed: the message names the source (file name when
// known), the byte offset or field, and what was expected versus found.
struct FormatError : Error {
    using Error::Error;
};
// Opening, reading, writing or renaming a file failed; the message carries the
// path and the operating system's reason.
struct IoError : Error {
    using Error::Error;
};

}  // namespace gltrain
