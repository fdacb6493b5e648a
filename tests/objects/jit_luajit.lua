-- Run by t_jit_luajit.sh: hot loops that LuaJIT compiles into traces,
-- calling the C functions of jit_luajit.c (its path: JIT_LUAJIT_LIB).
local ffi = require("ffi")
ffi.cdef [[
int plain(int x);
int plain_gcc(int x);
int call_back(int (*cb)(int), int x);
void take_backtrace(void);
void sample_start(void);
void report(void);
]]
local lib = ffi.load(os.getenv("JIT_LUAJIT_LIB"))
lib.sample_start()
local cb = ffi.cast("int (*)(int)", function(x)
	lib.take_backtrace()
	return x * 2
end)
local s = 0
for i = 1, 200000 do s = s + lib.plain(i % 7) end
for i = 1, 200000 do s = s + lib.call_back(cb, i % 7) end
for i = 1, 1000 do s = s + lib.plain_gcc(i % 7) end
-- Time in trace code itself, for the samples.
local x = 0
for i = 1, 100000000 do x = x + (i % 3) * 0.5 end
s = s + x
cb:free()
lib.report()
print("# sum " .. s)
