; t_jit_lli.sh: a CPU-bound loop in JIT code, two JIT frames deep, sampled
; by SIGPROF (jit_callback.c: sample_start(), sample_report()).
declare void @sample_start()
declare i32 @sample_report()

@acc = global i64 0

define void @jit_spin_inner(i64 %n) noinline uwtable {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
  %v = load volatile i64, i64* @acc
  %v1 = add i64 %v, %i
  store volatile i64 %v1, i64* @acc
  %i1 = add i64 %i, 1
  %c = icmp ult i64 %i1, %n
  br i1 %c, label %loop, label %done
done:
  ret void
}

define void @jit_spin_outer(i64 %n) noinline uwtable {
  call void @jit_spin_inner(i64 %n)
  call void @sample_start()
  ret void
}

define i32 @main() uwtable {
  call void @sample_start()
  call void @jit_spin_outer(i64 200000000)
  %r = call i32 @sample_report()
  ret i32 %r
}
