# SPDX-License-Identifier: GPL-2.0
#
# selftests/bench/bench.mk - benchmark programs (run by selftests/bench/*.sh
# in the VM, not by make check).  Included by the top-level Makefile.

BENCH_O		:= $(O)/bench

USER_TARGETS	+= $(BENCH_O)/stream $(BENCH_O)/xfer_bench $(BENCH_O)/himeno

$(BENCH_O)/stream: selftests/bench/stream.c uapi/linux/dlmem.h
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -Wextra -o $@ $<

$(BENCH_O)/xfer_bench: selftests/bench/xfer_bench.c \
		$(call daemon_objs,transport_tcp $(DAEMON_COMMON) \
		  $(if $(DAEMON_VERBS),transport_verbs $(DAEMON_VERBS)))
	@mkdir -p $(dir $@)
	$(CC) $(DAEMON_CFLAGS) $(DAEMON_VERBS_FLAGS) -Idaemon -o $@ $^ \
		$(DAEMON_VERBS_LIBS)

# The Himeno-style benchmark uses libdlm (static, like the selftests).
$(BENCH_O)/himeno: selftests/bench/himeno.c userlib/include/dlm.h $(O)/lib/libdlm.a
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -Wextra $(LIBDLM_INC) -o $@ $< -L$(O)/lib -l:libdlm.a -pthread -lm
