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
KCONFIG_ARGS	:= CONFIG_DLMEM=$(CONFIG_DLMEM) \
		   CONFIG_DLMEM_BLK=$(CONFIG_DLMEM_BLK) \
		   CONFIG_DLMEM_FMPL=$(CONFIG_DLMEM_FMPL) \
		   CONFIG_DLMEM_AWGSTAR=$(CONFIG_DLMEM_AWGSTAR)

KMAKE		= $(MAKE) -C $(KDIR) M=$(CURDIR)/kmod $(KCONFIG_ARGS) \
		  KCFLAGS="$(KMOD_KCFLAGS)"

USER_CFLAGS	:= -O2 -g -Wall $(USER_WERROR) -I$(CURDIR)/uapi
KSFT_INC	:= $(O)/kselftest

.PHONY: all modules user help deps check check-native check-vm check-vm-new lint \
	sparse checkpatch dkms-test intree-test demo bench bench-mpi bench-verbs bench-fmpl \
	install install-udev clean

all: modules user

help:
	@echo 'make              build dlmem.ko (KDIR=$(KDIR)) and user space'
	@echo 'make deps         install build/test dependencies (Debian 12, root)'
	@echo 'make check        native tests, lint, DKMS, selftests in a VM;'
	@echo '                  ends with "N passed, N failed, N skipped"'
	@echo 'make check-vm     only the selftests in the VM'
	@echo 'make check-vm-new the selftests on $(KVER_NEW) too'
	@echo 'make lint         checkpatch --strict and sparse on kmod/'
	@echo 'make dkms-test    dkms build for $(KVER_DEBIAN) in a private tree'
	@echo 'make intree-test  the module merged into linux-source-6.1 and built there'
	@echo 'make demo         boot a VM and run the /dev/dlm demo'
	@echo 'make bench        STREAM triad and Himeno through /dev/dlm vs swap on /dev/dlmb0,'
	@echo '                  nbd and zram, in a VM (BENCH_ARGS="MB ITERS PCT...");'
	@echo '                  table and PNG in $(RESULTS)/bench'
	@echo 'make bench-mpi    triad and Himeno over the tcp, Open MPI and MPICH transports,'
	@echo '                  kernel and MPI swap protocols side by side (BENCH_MPI_ARGS)'
	@echo 'make bench-verbs  perftest ib_read_bw/ib_write_bw beside the triad over verbs, tcp'
	@echo '                  and MPI on soft-RoCE, in a VM (BENCH_VERBS_ARGS)'
	@echo 'make bench-fmpl   OSU-style latency, bandwidth, pre-posted receives and collectives:'
	@echo '                  FMPL (/dev/fmpl) vs Open MPI vs MPICH, in a VM (BENCH_FMPL_ARGS)'
	@echo 'make install      install dlmem.ko and the uapi header'
	@echo 'Variables: KDIR, VM_KERNEL, O, WERROR, CONFIG_DLMEM_*'

# Idempotent and quick when everything is there; make check and make demo
# run it first so that each works on a fresh machine.
deps:
	@scripts/install-deps.sh

modules:
	@test -d $(KDIR) || { echo "no kernel build tree at $(KDIR):" \
		"run 'make deps' or pass KDIR=" >&2; exit 1; }
	$(KMAKE) W=1 modules

# ---- user space -----------------------------------------------------------

SELFTESTS	:= $(addprefix $(O)/selftests/dlm/,dlm_api_test dlm_map_test dlm_limits_test dlm_hold) \
		   $(O)/selftests/remote/dlm_rw
# Other selftest directories: selftests/NAME/*_test.c built the same way.
SELFTESTS	+= $(patsubst selftests/%.c,$(O)/selftests/%,\
		     $(filter-out selftests/dlm/%,$(wildcard selftests/*/*_test.c)))
TOOLS		:= $(O)/bin/dlmctl $(O)/bin/dlm-demo

# Sub-makefiles of user-space components add to USER_TARGETS and
# NATIVE_TESTS; they may use O, CC, USER_CFLAGS.
USER_TARGETS	:=
-include daemon/daemon.mk userlib/userlib.mk selftests/bench/bench.mk

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

check-vm: all
	@mkdir -p $(RESULTS)
	vm-images/vm-run --kernel $(VM_KERNEL) --out $(RESULTS)/vm -- \
		selftests/run-in-vm.sh $(RESULTS)/vm; \
	  scripts/vm-verdict $$? $(RESULTS)

# The same selftests on the newer kernel, with the module built for it in
# a copy of the sources (kmod/ keeps the default build).
KMOD_NEW	:= $(O)/kmod-$(KVER_NEW)
check-vm-new: user
	@mkdir -p $(RESULTS)
	@if [ ! -d $(KDIR_NEW) ]; then \
	  echo "1..0 # SKIP no headers for $(KVER_NEW) (make deps)" \
	    > $(RESULTS)/vm-$(KVER_NEW).tap; exit 0; fi; \
	rm -rf $(KMOD_NEW) && mkdir -p $(KMOD_NEW)/kmod && \
	cp kmod/*.[ch] kmod/Kbuild $(KMOD_NEW)/kmod/ && \
	cp -r uapi $(KMOD_NEW)/ && \
	$(MAKE) -C $(KDIR_NEW) M=$(KMOD_NEW)/kmod $(KCONFIG_ARGS) \
	  KCFLAGS="$(KMOD_KCFLAGS)" W=1 modules && \
	vm-images/vm-run --kernel $(KVER_NEW) --out $(RESULTS)/vm-$(KVER_NEW) -- \
	  selftests/run-in-vm.sh $(RESULTS)/vm-$(KVER_NEW) \
	  $(KMOD_NEW)/kmod/dlmem.ko; \
	scripts/vm-verdict $$? $(RESULTS) vm-$(KVER_NEW)

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
	@$(MAKE) --no-print-directory all
	vm-images/vm-run --kernel $(VM_KERNEL) -- vm-images/demo.sh

BENCH_ARGS	?= 32 3
bench: deps
	@$(MAKE) --no-print-directory all
	vm-images/vm-run --kernel $(VM_KERNEL) --timeout 10800 --out $(RESULTS)/vm-bench -- \
		env RUN_TIMEOUT=600 DLM_BENCH_OUT=$(RESULTS)/bench \
		selftests/bench/stream.sh $(BENCH_ARGS)

BENCH_MPI_ARGS	?= 32 3 50 25 10 7
BENCH_VERBS_ARGS ?= 32 3 25 10
BENCH_FMPL_ARGS	?= 1000 2 3 4
bench-mpi: deps
	@$(MAKE) --no-print-directory all
	vm-images/vm-run --kernel $(VM_KERNEL) --timeout 10800 --out $(RESULTS)/vm-bench-mpi -- \
		env RUN_TIMEOUT=600 DLM_BENCH_OUT=$(RESULTS)/bench \
		selftests/bench/mpi.sh $(BENCH_MPI_ARGS)

bench-verbs: deps
	@$(MAKE) --no-print-directory all
	vm-images/vm-run --kernel $(VM_KERNEL) --timeout 7200 --out $(RESULTS)/vm-bench-verbs -- \
		env RUN_TIMEOUT=600 DLM_BENCH_OUT=$(RESULTS)/bench \
		selftests/bench/verbs.sh $(BENCH_VERBS_ARGS)

bench-fmpl: deps
	@$(MAKE) --no-print-directory all
	vm-images/vm-run --kernel $(VM_KERNEL) --timeout 3600 --out $(RESULTS)/vm-bench-fmpl -- \
		env RUN_TIMEOUT=600 DLM_BENCH_OUT=$(RESULTS)/bench \
		selftests/bench/fmpl.sh $(BENCH_FMPL_ARGS)

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
