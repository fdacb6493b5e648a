# Objects: which loaded object holds a PC (discovery), what is known of it
# (the lock-free object cache), the objects loaded at start-up.
LIB_SRCS += src/objects/objcache.c src/objects/discover.c src/objects/startup.c \
	src/objects/main_eh.c src/objects/jit_registry.c
