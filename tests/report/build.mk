# Crash reports: t_crash_api (the one-call handler, case by case in
# children) uses the generic rule of tests/tests.mk; t_crash_handler.sh runs
# the examples crash-handler and crash-cxx (examples/build.mk).
