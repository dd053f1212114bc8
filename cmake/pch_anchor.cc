// The translation unit the shared precompiled headers are built with (cmake/precompiled_headers.cmake).
