# Base: the inflater and the deflater against zlib, gzip and objcopy
# (t_inflate: the generic rule; t_inflate.sh adds the fixtures it makes
# with those tools and libc6-dbg's compressed sections); the Zstandard
# decoder against the zstd CLI and objcopy (t_zstd, t_zstd.sh likewise).
