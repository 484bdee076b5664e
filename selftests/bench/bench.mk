# SPDX-License-Identifier: GPL-2.0
#
# selftests/bench/bench.mk - benchmark programs (run by selftests/bench/*.sh
# in the VM, not by make check).  Included by the top-level Makefile.

BENCH_O		:= $(O)/bench

USER_TARGETS	+= $(BENCH_O)/stream $(BENCH_O)/xfer_bench $(BENCH_O)/himeno

# The scripts' argument checks (no benchmark runs; safe outside the VM).
NATIVE_TESTS	+= bench-args=selftests/bench/test-args.sh

$(BENCH_O)/stream: selftests/bench/stream.c selftests/dlm/dlm_util.h uapi/linux/dlmem.h
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -Wextra -o $@ $<

$(BENCH_O)/xfer_bench: selftests/bench/xfer_bench.c \
		$(call daemon_objs,transport_tcp stats $(DAEMON_COMMON) \
		  $(if $(DAEMON_VERBS),transport_verbs $(DAEMON_VERBS)))
	@mkdir -p $(dir $@)
	$(CC) $(DAEMON_CFLAGS) $(DAEMON_VERBS_FLAGS) -Idaemon -o $@ $^ \
		$(DAEMON_VERBS_LIBS)

# wakeup.sh's neighbour on the program's CPU.
$(BENCH_O)/sleeper: selftests/bench/sleeper.c
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -Wextra -o $@ $<

USER_TARGETS	+= $(BENCH_O)/sleeper

# The Himeno-style benchmark uses libdlm (static, like the selftests).
$(BENCH_O)/himeno: selftests/bench/himeno.c userlib/include/dlm.h $(O)/lib/libdlm.a
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -Wextra $(LIBDLM_INC) -o $@ $< -L$(O)/lib -l:libdlm.a -pthread -lm

# ---- the OSU-style benchmark of FMPL against MPI (make bench-fmpl) ---------
# One source, osu_fmpl.c, three builds running the same loops: against
# libfmpl (like any user program, through pkg-config's fmpl-uninstalled.pc)
# and, with -DUSE_MPI, with the mpicc of each MPI found (as dlmd-openmpi
# and dlmd-mpich are built).
FMPL_PKG	= PKG_CONFIG_PATH=$(O)/lib/pkgconfig pkg-config

$(BENCH_O)/osu-fmpl: selftests/bench/osu_fmpl.c userlib/include/fmpl.h \
		uapi/linux/fmpl.h $(O)/lib/libfmpl.so $(O)/lib/pkgconfig/fmpl-uninstalled.pc
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -Wextra $$($(FMPL_PKG) --cflags fmpl) -o $@ $< \
		$$($(FMPL_PKG) --libs fmpl)

USER_TARGETS	+= $(BENCH_O)/osu-fmpl

define osu_mpi_rule
$(BENCH_O)/osu-$(1): selftests/bench/osu_fmpl.c
	@mkdir -p $$(dir $$@)
	mpicc.$(1) $$(USER_CFLAGS) -Wextra -DUSE_MPI -o $$@ $$<

USER_TARGETS	+= $(BENCH_O)/osu-$(1)
endef
$(foreach m,$(DLMD_MPIS),$(eval $(call osu_mpi_rule,$(m))))

# ---- libdlm's paging modes side by side (make bench-umode) -----------------
# One libdlm program (static) for kernel, sigsegv and uffd mode.
$(BENCH_O)/umode_bench: selftests/bench/umode_bench.c userlib/include/dlm.h \
		$(O)/lib/libdlm.a
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -Wextra $(LIBDLM_INC) -o $@ $< -L$(O)/lib -l:libdlm.a -pthread

USER_TARGETS	+= $(BENCH_O)/umode_bench

# ---- SPLASH-2-style kernels on AWG-STAR and MPI (make bench-awgstar) -------
include selftests/bench/splash/splash.mk
