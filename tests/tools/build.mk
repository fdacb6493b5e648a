# The examples and the preload library, run as users run them: scripts
# only (t_preload.sh, t_profiler.sh, t_server.sh); what they run is built
# by `make all` (examples/build.mk, src/preload/build.mk).
