# SPDX-License-Identifier: GPL-2.0
#
# DLM top-level build.  See README.md; `make help` lists the targets.

KVER_DEBIAN	:= 6.1.0-56-amd64
# The newer Debian kernel we also support: make check tests it too.
KVER_NEW	:= 6.12.117+deb12-amd64
KDIR_NEW	?= /usr/src/linux-headers-$(KVER_NEW)
# The running kernel's build directory when there is one, else Debian 6.1.
KDIR		?= $(firstword $(wildcard /lib/modules/$(shell uname -r)/build) \
			       /usr/src/linux-headers-$(KVER_DEBIAN))
# Kernel the VM tests boot: a version under /boot or a path to a vmlinuz.
VM_KERNEL	?= $(KVER_DEBIAN)

O		?= $(CURDIR)/build
SHELL		:= /bin/bash
CC		?= cc
LINUX_SRC_TAR	?= /usr/src/linux-source-6.1.tar.xz

# Warnings are errors in CI and on request (WERROR=1), not for DKMS users
# whose newer compiler may warn about something new.
WERROR		?= $(if $(filter true 1,$(CI)),1,0)
ifeq ($(WERROR),1)
KMOD_KCFLAGS	:= -Werror
USER_WERROR	:= -Werror
endif

# Subsystems (see Kconfig); the out-of-tree build honours the same symbols.
CONFIG_DLMEM		?= m
CONFIG_DLMEM_BLK	?= y
CONFIG_DLMEM_FMPL	?= y
CONFIG_DLMEM_AWGSTAR	?= y
KCONFIG_ARGS	:= CONFIG_DLMEM=$(CONFIG_DLMEM) \
		   CONFIG_DLMEM_BLK=$(CONFIG_DLMEM_BLK) \
		   CONFIG_DLMEM_FMPL=$(CONFIG_DLMEM_FMPL) \
		   CONFIG_DLMEM_AWGSTAR=$(CONFIG_DLMEM_AWGSTAR)

KMAKE		= $(MAKE) -C $(KDIR) M=$(CURDIR)/kmod $(KCONFIG_ARGS) \
		  KCFLAGS="$(KMOD_KCFLAGS)"

# dlmem.ko for the kernel a VM boots (VM_KERNEL): kmod/dlmem.ko when KDIR
# is that kernel's, else $(O)/kmod-VERSION/kmod/dlmem.ko, which vm-kmod
# builds from a copy of the sources against /usr/src/linux-headers-VERSION.
# VERSION is VM_KERNEL, or for a path the version in its name
# (.../vmlinuz-VERSION).  A path with KDIR given, or named otherwise (a
# bzImage), takes kmod/dlmem.ko, built with that KDIR.
KDIR_RELEASE	:= $(shell sed -n 's/.*UTS_RELEASE "\(.*\)"/\1/p' \
		     $(KDIR)/include/generated/utsrelease.h 2>/dev/null)
VM_KVER		:= $(strip $(if $(findstring /,$(VM_KERNEL)),\
		     $(if $(filter file,$(origin KDIR)),$(patsubst vmlinuz-%,%,\
		     $(filter vmlinuz-%,$(notdir $(VM_KERNEL))))),$(VM_KERNEL)))
VM_KO		:= $(strip $(if $(or $(if $(VM_KVER),,1),$(filter $(VM_KVER),$(KDIR_RELEASE))),\
		     $(CURDIR)/kmod/dlmem.ko,$(O)/kmod-$(VM_KVER)/kmod/dlmem.ko))

# $(call kmod_copy,VERSION,HEADERS): dlmem.ko built for kernel VERSION
# against the build tree HEADERS in $(O)/kmod-VERSION, from a copy of the
# sources (kmod/ keeps its own build).
kmod_copy	= test -d $(2) || { \
		    echo "no build tree for $(1) at $(2): run 'make deps'" \
		      "or apt-get install linux-headers-$(1)," \
		      "or pass KDIR=<its build tree>" >&2; exit 1; } && \
		  rm -rf $(O)/kmod-$(1) && mkdir -p $(O)/kmod-$(1)/kmod && \
		  cp kmod/*.[ch] kmod/Kbuild $(O)/kmod-$(1)/kmod/ && \
		  cp -r uapi $(O)/kmod-$(1)/ && \
		  $(MAKE) -C $(2) M=$(O)/kmod-$(1)/kmod $(KCONFIG_ARGS) \
		    KCFLAGS="$(KMOD_KCFLAGS)" W=1 modules

USER_CFLAGS	:= -O2 -g -Wall $(USER_WERROR) -I$(CURDIR)/uapi
KSFT_INC	:= $(O)/kselftest

.PHONY: all modules vm-kmod user help deps check check-native check-vm check-vm-new check-debug check-asan lint \
	sparse checkpatch dkms-test intree-test demo bench bench-mpi bench-mpi-pairs bench-verbs bench-fmpl \
	bench-replicas soak \
	bench-umode bench-awgstar bench-cpu bench-wakeup \
	install install-udev clean

all: modules user

help:
	@echo 'make              build dlmem.ko (KDIR=$(KDIR)) and user space'
	@echo 'make deps         install build/test dependencies (Debian 12, root)'
	@echo 'make check        native tests, lint, DKMS, selftests in a VM;'
	@echo '                  ends with "N passed, N failed, N skipped"'
	@echo 'make check-vm     only the selftests in the VM'
	@echo 'make check-vm-new the selftests on $(KVER_NEW) too'
	@echo 'make check-debug  the selftests on a 6.1 debug kernel (KASAN, kmemleak, lockdep,'
	@echo '                  DEBUG_PAGEALLOC) built and cached by vm-images/debug-kernel.sh;'
	@echo '                  slow (hours under TCG), not part of make check'
	@echo 'make check-asan   our user space (daemons, libraries) under AddressSanitizer and'
	@echo '                  UBSan: the native daemon tests, then the VM suites that run it'
	@echo '                  (ASAN_SUITES); any sanitizer report fails it; not part of make check'
	@echo 'make lint         checkpatch --strict, sparse and kernel-doc on kmod/, shellcheck'
	@echo 'make dkms-test    dkms build for $(KVER_DEBIAN) in a private tree'
	@echo 'make intree-test  the module merged into linux-source-6.1 and built there'
	@echo 'make demo         boot a VM and run the demo: /dev/dlm, then matvec paged to memory servers'
	@echo 'make bench        STREAM triad and Himeno through /dev/dlm vs swap on /dev/dlmb0,'
	@echo '                  nbd and zram, in a VM (BENCH_ARGS="MB ITERS PCT...");'
	@echo '                  table and PNG in $(RESULTS)/bench'
	@echo 'make bench-mpi    triad and Himeno over the tcp, Open MPI and MPICH transports,'
	@echo '                  kernel and MPI swap protocols side by side (BENCH_MPI_ARGS)'
	@echo 'make bench-mpi-pairs  issue 4'"'"'s Himeno bar alone: PAIRS rounds (default 5) of all-local'
	@echo '                  Himeno, then Himeno at 7% in a fresh job, per transport; in $(RESULTS)/bench-pairs'
	@echo 'make bench-cpu    Himeno at 7% local over tcp, daemons --sched batch and normal, vs'
	@echo '                  all-local: CPU busy/idle and run-queue waits per thread (BENCH_CPU_ARGS)'
	@echo 'make bench-wakeup what a wake-up on the program'"'"'s CPU costs it (a sleeper beside'
	@echo '                  all-local Himeno) and how many each transport brings (BENCH_WAKEUP_ARGS)'
	@echo 'make bench-verbs  perftest ib_read_bw/ib_write_bw beside the triad over verbs, tcp'
	@echo '                  and MPI on soft-RoCE, in a VM (BENCH_VERBS_ARGS)'
	@echo 'make bench-fmpl   OSU-style latency, bandwidth, pre-posted receives and collectives:'
	@echo '                  FMPL (/dev/fmpl) vs Open MPI vs MPICH, in a VM (BENCH_FMPL_ARGS)'
	@echo 'make bench-umode  libdlm kernel (/dev/dlm) vs sigsegv vs uffd paging: fault cost and'
	@echo '                  triad per local ratio, in a VM (BENCH_UMODE_ARGS="MB ITERS PCT...")'
	@echo 'make bench-awgstar SPLASH-2-style RADIX, LU, FFT on /dev/awgstar (1-3 boards, one'
	@echo '                  ring) vs Open MPI, untuned and tuned, in a VM (BENCH_AWGSTAR_ARGS)'
	@echo 'make bench-replicas  triad with every page on one vs two memory servers'
	@echo '                  (dlmd --replicas 2), in a VM (BENCH_REPLICAS_ARGS)'
	@echo 'make soak         SOAK_MINUTES (30) of mixed DLM work with data checks, memory'
	@echo '                  servers killed under dlmd --replicas 2, in a VM'
	@echo 'make install      install dlmem.ko, the uapi headers and the udev rule'
	@echo 'make install-tools  dlmd, dlm-memserver, awgstard (sbin), dlmctl (bin) and their'
	@echo '                  manual pages under TOOLS_PREFIX (/usr/local); make man: the pages only'
	@echo 'make install-libdlm, install-libfmpl, install-libawgstar: the libraries (see userlib/)'
	@echo 'make vm-kmod      dlmem.ko for VM_KERNEL (the VM targets build it): kmod/dlmem.ko,'
	@echo '                  or build/kmod-VM_KERNEL/ when KDIR is another kernel'"'"'s'
	@echo 'Variables: KDIR, VM_KERNEL (a version under /boot, e.g. $(KVER_NEW),'
	@echo '           or a vmlinuz), O, WERROR, CONFIG_DLMEM_*'

# Idempotent and quick when everything is there; make check and make demo
# run it first so that each works on a fresh machine.
deps:
	@scripts/install-deps.sh

modules:
	@test -d $(KDIR) || { echo "no kernel build tree at $(KDIR):" \
		"run 'make deps' or pass KDIR=" >&2; exit 1; }
	$(KMAKE) W=1 modules

vm-kmod: modules
	@$(if $(filter $(CURDIR)/kmod/dlmem.ko,$(VM_KO)),:,$(call kmod_copy,$(VM_KVER),/usr/src/linux-headers-$(VM_KVER)))

# ---- user space -----------------------------------------------------------

SELFTESTS	:= $(addprefix $(O)/selftests/dlm/,dlm_api_test dlm_map_test dlm_limits_test dlm_hold) \
		   $(O)/selftests/remote/dlm_rw $(O)/selftests/remote/dlm_pin \
		   $(O)/selftests/awgstar/awg_ring_prog
# Other selftest directories: selftests/NAME/*_test.c built the same way.
SELFTESTS	+= $(patsubst selftests/%.c,$(O)/selftests/%,\
		     $(filter-out selftests/dlm/%,$(wildcard selftests/*/*_test.c)))
TOOLS		:= $(O)/bin/dlmctl $(O)/bin/dlm-demo

# Sub-makefiles of user-space components add to USER_TARGETS and
# NATIVE_TESTS; they may use O, CC, USER_CFLAGS.
USER_TARGETS	:=
-include Documentation/man/man.mk daemon/daemon.mk userlib/userlib.mk \
	selftests/bench/bench.mk

user: $(SELFTESTS) $(TOOLS) $(USER_TARGETS)

# kselftest headers come from Debian's linux-source-6.1, never from the repo.
$(KSFT_INC)/kselftest_harness.h:
	@test -f $(LINUX_SRC_TAR) || { echo "$(LINUX_SRC_TAR) missing:" \
		"run 'make deps'" >&2; exit 1; }
	mkdir -p $(KSFT_INC)
	tar -C $(KSFT_INC) -xf $(LINUX_SRC_TAR) --strip-components=4 \
		linux-source-6.1/tools/testing/selftests/kselftest.h \
		linux-source-6.1/tools/testing/selftests/kselftest_harness.h
	touch $@

$(O)/selftests/%: selftests/%.c $(wildcard selftests/*/*.h) uapi/linux/dlmem.h \
		$(KSFT_INC)/kselftest_harness.h
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -I$(KSFT_INC) -pthread -o $@ $< $(SELFTEST_LDLIBS_$(*D))

$(O)/bin/dlmctl: daemon/dlmctl.c uapi/linux/dlmem.h
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -Wextra -o $@ $<

$(O)/bin/dlm-demo: userlib/examples/dlm-demo.c uapi/linux/dlmem.h
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -Wextra -o $@ $<

# ---- tests ----------------------------------------------------------------

RESULTS		:= $(O)/results

check: deps
	@$(MAKE) --no-print-directory all
	@rm -rf $(RESULTS) && mkdir -p $(RESULTS)
	-@$(MAKE) --no-print-directory check-native
	-@$(MAKE) --no-print-directory lint
	-@$(MAKE) --no-print-directory dkms-test
	-@$(MAKE) --no-print-directory intree-test
	-@$(MAKE) --no-print-directory check-vm
	-@$(MAKE) --no-print-directory check-vm-new
	@scripts/tap-summary $(RESULTS) | tee $(RESULTS)/summary.txt; \
	  exit $${PIPESTATUS[0]}

# Native tests: NAME=COMMAND pairs; sub-makefiles add their own.
NATIVE_TESTS	+= tap-summary=scripts/test-tap-summary.sh \
		   dmesg-check=vm-images/test-dmesg-check.sh \
		   uapi=scripts/test-uapi.sh

check-native: user
	@mkdir -p $(RESULTS)
	@rc=0; for t in $(NATIVE_TESTS); do \
	  scripts/run-tap native-$${t%%=*} $(RESULTS) $${t#*=} || rc=1; \
	done; exit $$rc

# Each selftest VM's bound: the 6.1 VM run took 20 to 27 minutes under TCG
# on an idle 2-core host (2026-11), as its suites grew and the host's
# speed varied.
VM_TIMEOUT	?= 2700

check-vm: all vm-kmod
	@mkdir -p $(RESULTS)
	vm-images/vm-run --kernel $(VM_KERNEL) --timeout $(VM_TIMEOUT) --out $(RESULTS)/vm -- \
		selftests/run-in-vm.sh $(RESULTS)/vm $(VM_KO); \
	  scripts/vm-verdict $$? $(RESULTS)

# The same selftests on the newer kernel, with the module built for it in
# a copy of the sources (kmod/ keeps the default build), except the
# directories in VM_NEW_SKIP (none by default; VM_NEW_SKIP=mpi saves about
# 3.5 minutes).  mpi/ runs here too: its --sched idle jobs beside busy
# loops need EEVDF (6.6+) and are skipped on the default kernel.
KMOD_NEW	:= $(O)/kmod-$(KVER_NEW)
VM_NEW_SKIP	?=
check-vm-new: user
	@mkdir -p $(RESULTS)
	@if [ ! -d $(KDIR_NEW) ]; then \
	  echo "1..0 # SKIP no headers for $(KVER_NEW) (make deps)" \
	    > $(RESULTS)/vm-$(KVER_NEW).tap; exit 0; fi; \
	$(call kmod_copy,$(KVER_NEW),$(KDIR_NEW)) && \
	vm-images/vm-run --kernel $(KVER_NEW) --timeout $(VM_TIMEOUT) --out $(RESULTS)/vm-$(KVER_NEW) -- \
	  env DLM_SELFTESTS_SKIP="$(VM_NEW_SKIP)" \
	  selftests/run-in-vm.sh $(RESULTS)/vm-$(KVER_NEW) \
	  $(KMOD_NEW)/kmod/dlmem.ko; \
	scripts/vm-verdict $$? $(RESULTS) vm-$(KVER_NEW)

# The selftests on a debug build of Debian's linux-source-6.1 (KASAN,
# kmemleak, lockdep, DEBUG_ATOMIC_SLEEP, DEBUG_PAGEALLOC; the fragment is
# vm-images/debug.config), built once and cached in $(O)/debug-kernel/ by
# vm-images/debug-kernel.sh, with the module built for it in a copy of the
# sources (kmod/dlmem.ko keeps the default build).  Too slow for make check
# and CI: run on demand and before releases (Documentation/testing.rst).
DEBUG_DIR	:= $(O)/debug-kernel
DEBUG_KMOD	:= $(DEBUG_DIR)/mod
DEBUG_RESULTS	:= $(RESULTS)/debug
DEBUG_TIMEOUT	?= 14400
DEBUG_MEM	?= 3G
DLM_TIMEOUT_SCALE ?= 4
# DLM_SELFTESTS="dlm fmpl" runs only those selftest directories.
DLM_SELFTESTS	?=
check-debug: user
	@DLM_DEBUG_KERNEL_DIR=$(DEBUG_DIR) vm-images/debug-kernel.sh
	@rm -rf $(DEBUG_RESULTS) $(DEBUG_KMOD) && mkdir -p $(DEBUG_RESULTS) $(DEBUG_KMOD)/kmod
	cp kmod/*.[ch] kmod/Kbuild $(DEBUG_KMOD)/kmod/ && cp -r uapi $(DEBUG_KMOD)/
	nice -n 19 $(MAKE) -C $(DEBUG_DIR)/linux-source-6.1 M=$(DEBUG_KMOD)/kmod $(KCONFIG_ARGS) \
		KCFLAGS="$(KMOD_KCFLAGS)" W=1 modules
	vm-images/vm-run --kernel $(DEBUG_DIR)/bzImage --mem $(DEBUG_MEM) \
		--timeout $(DEBUG_TIMEOUT) --out $(DEBUG_RESULTS)/vm -- \
		env DLM_TIMEOUT_SCALE=$(DLM_TIMEOUT_SCALE) DLM_SELFTESTS="$(DLM_SELFTESTS)" \
		vm-images/debug-guest.sh \
		$(DEBUG_RESULTS)/vm $(DEBUG_KMOD)/kmod/dlmem.ko; \
	  scripts/vm-verdict $$? $(DEBUG_RESULTS) vm
	@scripts/tap-summary $(DEBUG_RESULTS) | tee $(DEBUG_RESULTS)/summary.txt; \
	  exit $${PIPESTATUS[0]}

# User space under AddressSanitizer and UBSan: everything built again into
# $(ASAN_O) with the sanitizers, then the daemon's native tests and, in a
# VM, the selftest directories in ASAN_SUITES with those binaries.  The
# sanitizers write their reports to files and leave the programs' exit
# codes alone (the tests kill daemons and expect SIGBUS on purpose);
# scripts/asan-reports turns any report into a failure.  dlmd-openmpi and
# dlmd-mpich are built too; the MPI libraries' own allocations, never
# freed, are left out of the leak reports by scripts/lsan-mpi.supp, which
# needs whole allocation stacks (fast_unwind_on_malloc=0).  Not part of
# make check: about 21 minutes.
ASAN_O		:= $(O)/asan
ASAN_FLAGS	:= -fsanitize=address,undefined -fno-omit-frame-pointer
ASAN_SUITES	?= daemon remote verbs mpi libdlm fmpl awgstar
ASAN_RESULTS	:= $(RESULTS)/asan
ASAN_MAKE	:= $(MAKE) --no-print-directory O=$(ASAN_O) DLM_BUILD=$(ASAN_O) \
		   CC="$(CC) $(ASAN_FLAGS)" USER_CFLAGS="$(USER_CFLAGS) $(ASAN_FLAGS)"
ASAN_ENV	:= ASAN_OPTIONS=log_path=$(ASAN_RESULTS)/reports/asan:detect_leaks=1:exitcode=0:handle_segv=0:handle_sigbus=0:allow_user_segv_handler=1:fast_unwind_on_malloc=0 \
		   LSAN_OPTIONS=suppressions=$(CURDIR)/scripts/lsan-mpi.supp:print_suppressions=0 \
		   UBSAN_OPTIONS=log_path=$(ASAN_RESULTS)/reports/ubsan:print_stacktrace=1
check-asan: modules
	@rm -rf $(ASAN_RESULTS) && mkdir -p $(ASAN_RESULTS)/reports
	$(ASAN_MAKE) user
	-$(ASAN_ENV) $(ASAN_MAKE) RESULTS=$(ASAN_RESULTS) \
		NATIVE_TESTS='$$(DAEMON_NATIVE)' check-native
	-vm-images/vm-run --kernel $(VM_KERNEL) --timeout $(VM_TIMEOUT) --out $(ASAN_RESULTS)/vm -- \
		env $(ASAN_ENV) O=$(ASAN_O) DLM_BUILD=$(ASAN_O) DLM_SELFTESTS="$(ASAN_SUITES)" \
		selftests/run-in-vm.sh $(ASAN_RESULTS)/vm; \
	  scripts/vm-verdict $$? $(ASAN_RESULTS)
	@$(ASAN_ENV) ASAN_FLAGS="$(ASAN_FLAGS)" scripts/run-tap sanitizers $(ASAN_RESULTS) \
		scripts/asan-reports $(ASAN_RESULTS)/reports
	@scripts/tap-summary $(ASAN_RESULTS) | tee $(ASAN_RESULTS)/summary.txt; \
	  exit $${PIPESTATUS[0]}

lint:
	@mkdir -p $(RESULTS)
	scripts/run-tap lint $(RESULTS) scripts/lint.sh $(KDIR)

dkms-test:
	@mkdir -p $(RESULTS)
	scripts/run-tap dkms $(RESULTS) scripts/test-dkms.sh $(KVER_DEBIAN)

intree-test:
	@mkdir -p $(RESULTS)
	scripts/run-tap intree $(RESULTS) scripts/test-intree.sh $(KVER_DEBIAN)

demo: deps
	@$(MAKE) --no-print-directory all vm-kmod
	vm-images/vm-run --kernel $(VM_KERNEL) -- env DLM_KO=$(VM_KO) vm-images/demo.sh

BENCH_ARGS	?= 128 3
bench: deps
	@$(MAKE) --no-print-directory all vm-kmod
	vm-images/vm-run --kernel $(VM_KERNEL) --timeout 10800 --out $(RESULTS)/vm-bench -- \
		env DLM_KO=$(VM_KO) RUN_TIMEOUT=600 DLM_BENCH_OUT=$(RESULTS)/bench \
		selftests/bench/stream.sh $(BENCH_ARGS)

BENCH_MPI_ARGS	?= 32 3 50 25 10 7
BENCH_VERBS_ARGS ?= 32 3 25 10
BENCH_FMPL_ARGS	?= 1000 2 3 4
BENCH_UMODE_ARGS ?= 32 3 100 50 25 10
bench-mpi: deps
	@$(MAKE) --no-print-directory all vm-kmod
	vm-images/vm-run --kernel $(VM_KERNEL) --timeout 10800 --out $(RESULTS)/vm-bench-mpi -- \
		env DLM_KO=$(VM_KO) RUN_TIMEOUT=600 DLM_BENCH_OUT=$(RESULTS)/bench \
		selftests/bench/mpi.sh $(BENCH_MPI_ARGS)

# Issue 4's Himeno bar alone (mpi.sh PAIRS_ONLY=1), a few minutes.
PAIRS		?= 5
bench-mpi-pairs: deps
	@$(MAKE) --no-print-directory all vm-kmod
	vm-images/vm-run --kernel $(VM_KERNEL) --timeout 10800 --out $(RESULTS)/vm-bench-mpi-pairs -- \
		env DLM_KO=$(VM_KO) RUN_TIMEOUT=600 DLM_BENCH_OUT=$(RESULTS)/bench-pairs \
		PAIRS_ONLY=1 PAIRS=$(PAIRS) selftests/bench/mpi.sh 32 3 7

BENCH_CPU_ARGS	?= 7 3
# The daemons' CPU policies to compare (dlmd --sched); empty: batch normal.
SCHEDS		?=
bench-cpu: deps
	@$(MAKE) --no-print-directory all vm-kmod
	vm-images/vm-run --kernel $(VM_KERNEL) --timeout 3600 --out $(RESULTS)/vm-bench-cpu -- \
		env DLM_KO=$(VM_KO) RUN_TIMEOUT=600 DLM_BENCH_OUT=$(RESULTS)/bench SCHEDS="$(SCHEDS)" \
		selftests/bench/cpu.sh $(BENCH_CPU_ARGS)

BENCH_WAKEUP_ARGS ?= 7 5
bench-wakeup: deps
	@$(MAKE) --no-print-directory all vm-kmod
	vm-images/vm-run --kernel $(VM_KERNEL) --timeout 3600 --out $(RESULTS)/vm-bench-wakeup -- \
		env DLM_KO=$(VM_KO) RUN_TIMEOUT=600 DLM_BENCH_OUT=$(RESULTS)/bench \
		selftests/bench/wakeup.sh $(BENCH_WAKEUP_ARGS)

bench-verbs: deps
	@$(MAKE) --no-print-directory all vm-kmod
	vm-images/vm-run --kernel $(VM_KERNEL) --timeout 7200 --out $(RESULTS)/vm-bench-verbs -- \
		env DLM_KO=$(VM_KO) RUN_TIMEOUT=600 DLM_BENCH_OUT=$(RESULTS)/bench \
		selftests/bench/verbs.sh $(BENCH_VERBS_ARGS)

bench-fmpl: deps
	@$(MAKE) --no-print-directory all vm-kmod
	vm-images/vm-run --kernel $(VM_KERNEL) --timeout 3600 --out $(RESULTS)/vm-bench-fmpl -- \
		env DLM_KO=$(VM_KO) RUN_TIMEOUT=600 DLM_BENCH_OUT=$(RESULTS)/bench \
		selftests/bench/fmpl.sh $(BENCH_FMPL_ARGS)

# libdlm's user-level paging modes against /dev/dlm (issue 8).
bench-umode: deps
	@$(MAKE) --no-print-directory all vm-kmod
	vm-images/vm-run --kernel $(VM_KERNEL) --timeout 3600 --out $(RESULTS)/vm-bench-umode -- \
		env DLM_KO=$(VM_KO) RUN_TIMEOUT=300 DLM_BENCH_OUT=$(RESULTS)/bench \
		selftests/bench/umode.sh $(BENCH_UMODE_ARGS)

# The seed report's section 4 (issue 7): SPLASH-2-style kernels on the
# AWG-STAR emulation against Open MPI; the script loads dlmem.ko with
# AWG_BOARDS boards.  BENCH_AWGSTAR_ARGS: the numbers of nodes.
BENCH_AWGSTAR_ARGS ?= 1 2 3
bench-awgstar: deps
	@$(MAKE) --no-print-directory all vm-kmod
	vm-images/vm-run --kernel $(VM_KERNEL) --timeout 7200 --out $(RESULTS)/vm-bench-awgstar -- \
		env DLM_KO=$(VM_KO) RUN_TIMEOUT=600 AWG_BOARDS=3 DLM_BENCH_OUT=$(RESULTS)/bench \
		selftests/bench/awgstar.sh $(BENCH_AWGSTAR_ARGS)

bench-replicas: deps
	@$(MAKE) --no-print-directory all vm-kmod
	vm-images/vm-run --kernel $(VM_KERNEL) --timeout 3600 --out $(RESULTS)/vm-bench-replicas -- \
		env DLM_KO=$(VM_KO) RUN_TIMEOUT=600 DLM_BENCH_OUT=$(RESULTS)/bench \
		selftests/bench/replicas.sh $(BENCH_REPLICAS_ARGS)

# A bounded mixed workload with integrity checks and memory servers killed
# under replication (issue 9); on demand, not part of check.
SOAK_MINUTES ?= 30
soak: deps
	@$(MAKE) --no-print-directory all vm-kmod
	vm-images/vm-run --kernel $(VM_KERNEL) --timeout $$(( $(SOAK_MINUTES) * 60 + 900 )) \
		--out $(RESULTS)/vm-soak -- env DLM_KO=$(VM_KO) \
		selftests/soak/soak.sh $(SOAK_MINUTES)

install: modules install-udev
	$(KMAKE) modules_install
	install -D -m 0644 uapi/linux/dlmem.h $(DESTDIR)/usr/include/linux/dlmem.h
	install -D -m 0644 uapi/linux/fmpl.h $(DESTDIR)/usr/include/linux/fmpl.h

# The devices' owners and modes (group dlm for /dev/dlm); see the file.
install-udev:
	install -D -m 0644 udev/60-dlmem.rules \
		$(DESTDIR)/etc/udev/rules.d/60-dlmem.rules
	$(if $(DESTDIR),,getent group dlm >/dev/null || groupadd --system dlm)

clean:
	-$(KMAKE) clean
	rm -rf $(O)
