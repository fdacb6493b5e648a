/* Helper object for t_interpose's control: thread-local data in a
 * dlopen()ed object, which glibc allocates lazily (malloc from
 * __tls_get_addr) the first time each thread touches it. */
__thread char walk_tls_buf[4096];

int walk_tls_touch(int x)
{
	walk_tls_buf[x & 4095]++;
	return walk_tls_buf[0];
}
