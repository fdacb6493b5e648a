; t_jit_lli.sh: main -> jit_mid -> jit_leaf -> callback (jit_callback.c,
; preloaded), each JIT function with a call after the next so that no call
; is a tail call.
declare void @callback()

define void @jit_after() noinline uwtable {
  ret void
}

define void @jit_leaf() noinline uwtable {
  call void @callback()
  call void @jit_after()
  ret void
}

define void @jit_mid() noinline uwtable {
  call void @jit_leaf()
  call void @jit_after()
  ret void
}

define i32 @main() uwtable {
  call void @jit_mid()
  call void @jit_after()
  ret i32 0
}
