# The walker and its memo of rows by return address.  The walker's inner
# loop needs every register it can get: built without a frame pointer
# (it steps out of its own frames with their SFrame rows, like any other
# code).
LIB_SRCS += src/walk/walk.c src/walk/rowmemo.c
NO_FRAME_POINTER += walk/walk
