# Base: the inflater and the deflater against zlib, gzip and objcopy
# (t_inflate: the generic rule; t_inflate.sh adds the fixtures it makes
# with those tools and libc6-dbg's compressed sections).
