/* Helper object for t_symbolize: built unstripped, with DT_HASH only (to
 * exercise the SysV hash path), holding an exported function and a static
 * one that only .symtab can name. */
static volatile int helper_sink;

__attribute__((noinline)) static int helper_static(int x)
{
	for (int i = 0; i < x; i++)
		helper_sink += i ^ x;
	return helper_sink;
}

int sfb_helper_exported(int x)
{
	for (int i = 0; i < x; i++)
		helper_sink += i * x;
	return helper_static(helper_sink);
}

void *sfb_helper_static_addr(void)
{
	return (void *)helper_static;
}
