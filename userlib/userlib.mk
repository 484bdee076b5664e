# SPDX-License-Identifier: GPL-2.0
#
# userlib.mk - libdlm, libfmpl and libawgstar, their tools, examples and tests;
# included by the top-level Makefile (which provides O, CC, USER_CFLAGS,
# KSFT_INC, USER_TARGETS, NATIVE_TESTS).  See userlib/README.md.
#
#   $(O)/lib/libdlm.so.0   shared library (soname libdlm.so.0) + libdlm.so
#   $(O)/lib/libdlm.a      static library, only the public API global
#   $(O)/lib/libdlm-preload.so  LD_PRELOAD interposer: big allocations to DLM
#   $(O)/lib/pkgconfig/    dlm.pc (for LIBDLM_PREFIX) and dlm-uninstalled.pc
#   $(O)/bin/matvec        the DLM-MPI paper's Fig. 3 program
#   $(O)/bin/matvec-fig2   its Fig. 2 program (`dlm` arrays), N=2000
#   make install-libdlm    install under LIBDLM_PREFIX (/usr/local), DESTDIR

LIBDLM_VERSION	:= 0.1.0
LIBDLM_PREFIX	?= /usr/local
OBJCOPY		?= objcopy

LIBDLM_SRCS	:= $(addprefix userlib/libdlm/,arena.c config.c errors.c space.c section.c dlm.c \
		     umode.c umode_sigsegv.c umode_uffd.c)
LIBDLM_HDRS	:= userlib/include/dlm.h $(wildcard userlib/libdlm/*.h) uapi/linux/dlmem.h
LIBDLM_OBJS	:= $(patsubst userlib/libdlm/%.c,$(O)/userlib/obj/%.o,$(LIBDLM_SRCS))
# The user-level modes (umode*.c) speak daemon/wire.c to dlm-memserver.
LIBDLM_OBJS	+= $(O)/userlib/obj/wire.o
LIBDLM_INC	:= -I$(CURDIR)/userlib/include
LIBDLM_CFLAGS	:= $(USER_CFLAGS) -std=c11 -Wextra -pthread $(LIBDLM_INC) \
		   -fPIC -fvisibility=hidden
LIBDLM_TESTS	:= $(O)/userlib/tests/arena_test $(O)/userlib/tests/config_test

USER_TARGETS	+= $(O)/lib/libdlm.so.0 $(O)/lib/libdlm.so $(O)/lib/libdlm.a \
		   $(O)/lib/libdlm-preload.so $(O)/selftests/libdlm/preload_prog \
		   $(O)/lib/pkgconfig/dlm.pc $(O)/lib/pkgconfig/dlm-uninstalled.pc \
		   $(O)/bin/matvec $(O)/bin/matvec-fig2 $(LIBDLM_TESTS)

NATIVE_TESTS	+= libdlm-arena=$(O)/userlib/tests/arena_test \
		   libdlm-config=$(O)/userlib/tests/config_test \
		   libdlm-abi=userlib/tests/abi_test.sh
# abi_test.sh finds the build directory here.
export LIBDLM_O	:= $(O)

$(O)/userlib/obj/%.o: userlib/libdlm/%.c $(LIBDLM_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(LIBDLM_CFLAGS) -c -o $@ $<

$(O)/lib/libdlm.so.0: $(LIBDLM_OBJS)
	@mkdir -p $(dir $@)
	$(CC) -shared -pthread -Wl,-soname,libdlm.so.0 -Wl,-z,defs -o $@ $^

$(O)/lib/libdlm.so: | $(O)/lib/libdlm.so.0
	ln -sf libdlm.so.0 $@

# The interposer: the space and allocator of libdlm under malloc() and
# friends; the version script exports only those.
LIBDLM_PRELOAD_OBJS := $(patsubst %,$(O)/userlib/obj/%.o,arena config errors space preload \
		       umode umode_sigsegv umode_uffd wire)
$(O)/lib/libdlm-preload.so: $(LIBDLM_PRELOAD_OBJS) userlib/libdlm/preload.map
	@mkdir -p $(dir $@)
	$(CC) -shared -pthread -Wl,-soname,libdlm-preload.so -Wl,-z,defs \
		-Wl,--version-script=userlib/libdlm/preload.map \
		-o $@ $(LIBDLM_PRELOAD_OBJS) -ldl

# One relocatable object with the internal (hidden) symbols made local, so
# that static linking exports nothing but the dlm_* API either.
$(O)/lib/libdlm.a: $(LIBDLM_OBJS)
	@mkdir -p $(dir $@)
	$(CC) -r -nostdlib -o $(O)/userlib/obj/libdlm-all.o $^
	$(OBJCOPY) --localize-hidden $(O)/userlib/obj/libdlm-all.o
	rm -f $@ && $(AR) rcs $@ $(O)/userlib/obj/libdlm-all.o

define LIBDLM_PC
Name: dlm
Description: DLM distributed large memory: dlm_startup, dlm_alloc over /dev/dlm
Version: $(LIBDLM_VERSION)
Cflags: -I$${includedir}
Libs.private: -pthread
endef
export LIBDLM_PC

$(O)/lib/pkgconfig/dlm.pc: userlib/userlib.mk
	@mkdir -p $(dir $@)
	{ echo 'prefix=$(LIBDLM_PREFIX)'; echo 'libdir=$${prefix}/lib'; \
	  echo 'includedir=$${prefix}/include'; echo; \
	  echo "$$LIBDLM_PC"; echo 'Libs: -L$${libdir} -ldlm'; } > $@

# pkg-config prefers NAME-uninstalled.pc: with PKG_CONFIG_PATH=$(O)/lib/pkgconfig
# programs build against (and run from) this tree.
$(O)/lib/pkgconfig/dlm-uninstalled.pc: userlib/userlib.mk
	@mkdir -p $(dir $@)
	{ echo 'libdir=$(O)/lib'; echo 'includedir=$(CURDIR)/userlib/include'; \
	  echo; echo "$$LIBDLM_PC"; \
	  echo 'Libs: -L$${libdir} -Wl,-rpath,$${libdir} -ldlm'; } > $@

# The example builds like any user program: cc matvec.c -ldlm.
$(O)/bin/matvec: userlib/examples/matvec.c userlib/include/dlm.h \
		$(O)/lib/libdlm.so.0 | $(O)/lib/libdlm.so
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -Wextra $(LIBDLM_INC) -o $@ $< \
		-L$(O)/lib -Wl,-rpath,'$$ORIGIN/../lib' -ldlm

# Fig. 2 builds with plain cc too: only the `dlm` specifier of <dlm.h>.
# N=2000: 32 MB of dlm arrays, a size the VM tests can swap.
$(O)/bin/matvec-fig2: userlib/examples/matvec-fig2.c userlib/include/dlm.h \
		$(O)/lib/libdlm.so.0 | $(O)/lib/libdlm.so
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -Wextra $(LIBDLM_INC) -DN=2000 -o $@ $< \
		-L$(O)/lib -Wl,-rpath,'$$ORIGIN/../lib' -ldlm

# Native unit tests: the allocator over a made-up address range, and the
# option/memfile parser; no /dev/dlm needed.
$(O)/userlib/tests/arena_test: userlib/tests/arena_test.c userlib/libdlm/arena.c \
		userlib/libdlm/arena.h $(KSFT_INC)/kselftest_harness.h
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -I$(KSFT_INC) -Iuserlib/libdlm -pthread \
		-o $@ $< userlib/libdlm/arena.c

$(O)/userlib/tests/config_test: userlib/tests/config_test.c userlib/libdlm/config.c \
		userlib/libdlm/errors.c $(LIBDLM_HDRS) $(KSFT_INC)/kselftest_harness.h
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -I$(KSFT_INC) -Iuserlib/libdlm $(LIBDLM_INC) \
		-pthread -o $@ $< userlib/libdlm/config.c userlib/libdlm/errors.c

# Selftests in the VM (selftests/libdlm/*_test.c and preload_prog, built by
# the top-level pattern rule) link the static library.
SELFTEST_LDLIBS_libdlm := $(LIBDLM_INC) -L$(O)/lib -l:libdlm.a
$(patsubst selftests/%.c,$(O)/selftests/%,$(wildcard selftests/libdlm/*.c)): \
		$(O)/lib/libdlm.a userlib/include/dlm.h

# ---- libdlm's user-level modes (--mode=sigsegv|uffd, umode*.c) -------------
# daemon/wire.c built into libdlm with hidden symbols; the native test runs
# a dlm-memserver on 127.0.0.1 and both modes against it.
$(O)/userlib/obj/wire.o: daemon/wire.c daemon/wire.h
	@mkdir -p $(dir $@)
	$(CC) $(LIBDLM_CFLAGS) -D_DEFAULT_SOURCE -c -o $@ $<

$(O)/userlib/obj/umode.o: daemon/wire.h

$(O)/userlib/tests/umode_test: userlib/tests/umode_test.c userlib/include/dlm.h \
		$(O)/lib/libdlm.a $(KSFT_INC)/kselftest_harness.h
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -I$(KSFT_INC) $(LIBDLM_INC) -pthread -o $@ $< \
		$(O)/lib/libdlm.a

USER_TARGETS	+= $(O)/userlib/tests/umode_test
NATIVE_TESTS	+= libdlm-umode=$(O)/userlib/tests/umode_test
# ---- end of the user-level modes' block --------------------------------------

.PHONY: install-libdlm
install-libdlm: $(O)/lib/libdlm.so.0 $(O)/lib/libdlm.a $(O)/lib/pkgconfig/dlm.pc \
		$(O)/lib/libdlm-preload.so
	install -D -m 0755 $(O)/lib/libdlm.so.0 $(DESTDIR)$(LIBDLM_PREFIX)/lib/libdlm.so.0
	ln -sf libdlm.so.0 $(DESTDIR)$(LIBDLM_PREFIX)/lib/libdlm.so
	install -m 0644 $(O)/lib/libdlm.a $(DESTDIR)$(LIBDLM_PREFIX)/lib/libdlm.a
	install -m 0755 $(O)/lib/libdlm-preload.so \
		$(DESTDIR)$(LIBDLM_PREFIX)/lib/libdlm-preload.so
	install -D -m 0644 userlib/include/dlm.h $(DESTDIR)$(LIBDLM_PREFIX)/include/dlm.h
	install -D -m 0644 $(O)/lib/pkgconfig/dlm.pc \
		$(DESTDIR)$(LIBDLM_PREFIX)/lib/pkgconfig/dlm.pc
	$(call install_man,3,$(LIBDLM_PREFIX),dlm_*.3)
	$(if $(DESTDIR),,-ldconfig)

# ---- libfmpl: the FMPL message library over /dev/fmpl ----------------------
#
#   $(O)/lib/libfmpl.so.0  shared library (soname libfmpl.so.0) + libfmpl.so
#   $(O)/lib/libfmpl.a     static library, only the public API global
#   $(O)/lib/pkgconfig/    fmpl.pc (for LIBFMPL_PREFIX), fmpl-uninstalled.pc
#   $(O)/bin/fmplrun       the launcher: fmplrun -np N PROGRAM
#   $(O)/bin/fmpl-pingpong the example
#   make install-libfmpl   install under LIBFMPL_PREFIX (/usr/local), DESTDIR

LIBFMPL_VERSION	:= 0.1.0
LIBFMPL_PREFIX	?= /usr/local

LIBFMPL_SRCS	:= $(addprefix userlib/libfmpl/,errors.c env.c init.c p2p.c fast.c coll.c ops.c)
LIBFMPL_HDRS	:= userlib/include/fmpl.h $(wildcard userlib/libfmpl/*.h) uapi/linux/fmpl.h
LIBFMPL_OBJS	:= $(patsubst userlib/libfmpl/%.c,$(O)/userlib/fmpl-obj/%.o,$(LIBFMPL_SRCS))
LIBFMPL_CFLAGS	:= $(USER_CFLAGS) -std=c11 -Wextra $(LIBDLM_INC) -fPIC -fvisibility=hidden
LIBFMPL_TESTS	:= $(addprefix $(O)/userlib/tests/,fmpl_ops_test fmpl_env_test fmpl_init_test)

USER_TARGETS	+= $(O)/lib/libfmpl.so.0 $(O)/lib/libfmpl.so $(O)/lib/libfmpl.a \
		   $(O)/lib/pkgconfig/fmpl.pc $(O)/lib/pkgconfig/fmpl-uninstalled.pc \
		   $(O)/bin/fmplrun $(O)/bin/fmpl-pingpong $(LIBFMPL_TESTS)

NATIVE_TESTS	+= libfmpl-ops=$(O)/userlib/tests/fmpl_ops_test \
		   libfmpl-env=$(O)/userlib/tests/fmpl_env_test \
		   libfmpl-init=$(O)/userlib/tests/fmpl_init_test \
		   libfmpl-fmplrun=userlib/tests/fmplrun_test.sh \
		   libfmpl-abi=userlib/tests/fmpl_abi_test.sh

$(O)/userlib/fmpl-obj/%.o: userlib/libfmpl/%.c $(LIBFMPL_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(LIBFMPL_CFLAGS) -c -o $@ $<

$(O)/lib/libfmpl.so.0: $(LIBFMPL_OBJS)
	@mkdir -p $(dir $@)
	$(CC) -shared -Wl,-soname,libfmpl.so.0 -Wl,-z,defs -o $@ $^ -lm

$(O)/lib/libfmpl.so: | $(O)/lib/libfmpl.so.0
	ln -sf libfmpl.so.0 $@

# As libdlm.a: one relocatable object, internal symbols made local.
$(O)/lib/libfmpl.a: $(LIBFMPL_OBJS)
	@mkdir -p $(dir $@)
	$(CC) -r -nostdlib -o $(O)/userlib/fmpl-obj/libfmpl-all.o $^
	$(OBJCOPY) --localize-hidden $(O)/userlib/fmpl-obj/libfmpl-all.o
	rm -f $@ && $(AR) rcs $@ $(O)/userlib/fmpl-obj/libfmpl-all.o

define LIBFMPL_PC
Name: fmpl
Description: FMPL message passing over /dev/fmpl (sender-side matching, one copy)
Version: $(LIBFMPL_VERSION)
Libs.private: -lm
endef
export LIBFMPL_PC

# <fmpl.h> includes <linux/fmpl.h>: installed beside it until the kernel's
# headers have it.
$(O)/lib/pkgconfig/fmpl.pc: userlib/userlib.mk
	@mkdir -p $(dir $@)
	{ echo 'prefix=$(LIBFMPL_PREFIX)'; echo 'libdir=$${prefix}/lib'; \
	  echo 'includedir=$${prefix}/include'; echo; \
	  echo "$$LIBFMPL_PC"; echo 'Cflags: -I$${includedir}'; \
	  echo 'Libs: -L$${libdir} -lfmpl'; } > $@

$(O)/lib/pkgconfig/fmpl-uninstalled.pc: userlib/userlib.mk
	@mkdir -p $(dir $@)
	{ echo 'libdir=$(O)/lib'; echo 'includedir=$(CURDIR)/userlib/include'; \
	  echo 'uapidir=$(CURDIR)/uapi'; echo; echo "$$LIBFMPL_PC"; \
	  echo 'Cflags: -I$${includedir} -I$${uapidir}'; \
	  echo 'Libs: -L$${libdir} -Wl,-rpath,$${libdir} -lfmpl'; } > $@

$(O)/bin/fmplrun: userlib/tools/fmplrun.c
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -std=gnu11 -Wextra -o $@ $<

$(O)/bin/fmpl-pingpong: userlib/examples/fmpl-pingpong.c $(LIBFMPL_HDRS) \
		$(O)/lib/libfmpl.so.0 | $(O)/lib/libfmpl.so
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -Wextra $(LIBDLM_INC) -o $@ $< \
		-L$(O)/lib -Wl,-rpath,'$$ORIGIN/../lib' -lfmpl

# Native tests: the reductions (through libfmpl.a), the environment and
# errno mapping (env.c and errors.c alone), fmpl_init without /dev/fmpl.
$(O)/userlib/tests/fmpl_ops_test: userlib/tests/fmpl_ops_test.c $(LIBFMPL_HDRS) \
		$(O)/lib/libfmpl.a $(KSFT_INC)/kselftest_harness.h
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -I$(KSFT_INC) $(LIBDLM_INC) -o $@ $< \
		$(O)/lib/libfmpl.a -lm

$(O)/userlib/tests/fmpl_env_test: userlib/tests/fmpl_env_test.c userlib/libfmpl/env.c \
		userlib/libfmpl/errors.c $(LIBFMPL_HDRS) $(KSFT_INC)/kselftest_harness.h
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -I$(KSFT_INC) -Iuserlib/libfmpl $(LIBDLM_INC) \
		-o $@ $< userlib/libfmpl/env.c userlib/libfmpl/errors.c

$(O)/userlib/tests/fmpl_init_test: userlib/tests/fmpl_init_test.c $(LIBFMPL_HDRS) \
		$(O)/lib/libfmpl.a $(KSFT_INC)/kselftest_harness.h
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -I$(KSFT_INC) $(LIBDLM_INC) -o $@ $< \
		$(O)/lib/libfmpl.a -lm

# Selftests in the VM (selftests/fmpl/*_test.c, built by the top-level
# pattern rule) link the static library.
SELFTEST_LDLIBS_fmpl := $(LIBDLM_INC) -L$(O)/lib -l:libfmpl.a -lm
$(patsubst selftests/%.c,$(O)/selftests/%,$(wildcard selftests/fmpl/*_test.c)): \
		$(O)/lib/libfmpl.a $(LIBFMPL_HDRS)

.PHONY: install-libfmpl
install-libfmpl: $(O)/lib/libfmpl.so.0 $(O)/lib/libfmpl.a $(O)/lib/pkgconfig/fmpl.pc \
		$(O)/bin/fmplrun $(MAN_DIR)/fmplrun.1
	install -D -m 0755 $(O)/lib/libfmpl.so.0 $(DESTDIR)$(LIBFMPL_PREFIX)/lib/libfmpl.so.0
	ln -sf libfmpl.so.0 $(DESTDIR)$(LIBFMPL_PREFIX)/lib/libfmpl.so
	install -m 0644 $(O)/lib/libfmpl.a $(DESTDIR)$(LIBFMPL_PREFIX)/lib/libfmpl.a
	install -D -m 0644 userlib/include/fmpl.h $(DESTDIR)$(LIBFMPL_PREFIX)/include/fmpl.h
	install -D -m 0644 uapi/linux/fmpl.h $(DESTDIR)$(LIBFMPL_PREFIX)/include/linux/fmpl.h
	install -D -m 0644 $(O)/lib/pkgconfig/fmpl.pc \
		$(DESTDIR)$(LIBFMPL_PREFIX)/lib/pkgconfig/fmpl.pc
	install -D -m 0755 $(O)/bin/fmplrun $(DESTDIR)$(LIBFMPL_PREFIX)/bin/fmplrun
	install -D -m 0644 $(MAN_DIR)/fmplrun.1 \
		$(DESTDIR)$(LIBFMPL_PREFIX)/share/man/man1/fmplrun.1
	$(call install_man,3,$(LIBFMPL_PREFIX),libfmpl.3 fmpl_*.3)
	$(call install_man,4,$(LIBFMPL_PREFIX),fmpl.4)
	$(if $(DESTDIR),,-ldconfig)

# ---- libawgstar: the AWG-STAR shared-memory board (/dev/awgstar) ----------
#
#   $(O)/lib/libawgstar.so.0  shared library (soname libawgstar.so.0) + .so
#   $(O)/lib/libawgstar.a     static library, only the public API global
#   $(O)/lib/pkgconfig/       awgstar.pc (for LIBAWG_PREFIX), awgstar-uninstalled.pc
#   make install-libawgstar   install under LIBAWG_PREFIX (/usr/local), DESTDIR

LIBAWG_VERSION	:= 0.1.0
LIBAWG_PREFIX	?= /usr/local

LIBAWG_SRCS	:= $(addprefix userlib/libawgstar/,util.c open.c info.c xfer.c peekpoke.c \
		     event.c barrier.c)
LIBAWG_HDRS	:= userlib/include/awgstar.h $(wildcard userlib/libawgstar/*.h) \
		   uapi/linux/awgstar.h
LIBAWG_OBJS	:= $(patsubst userlib/libawgstar/%.c,$(O)/userlib/awg-obj/%.o,$(LIBAWG_SRCS))
LIBAWG_CFLAGS	:= $(USER_CFLAGS) -std=c11 -Wextra $(LIBDLM_INC) -fPIC -fvisibility=hidden

# Selftests in the VM (selftests/awgstar/*.c, built by the top-level
# pattern rule) link the static library: awg_ring_prog for its libbarrier
# mode.  All of them wait for it, or make -j links one before it exists.
SELFTEST_LDLIBS_awgstar := $(LIBDLM_INC) -L$(O)/lib -l:libawgstar.a
$(patsubst selftests/%.c,$(O)/selftests/%,$(wildcard selftests/awgstar/*.c)): \
		$(O)/lib/libawgstar.a $(LIBAWG_HDRS)

USER_TARGETS	+= $(O)/lib/libawgstar.so.0 $(O)/lib/libawgstar.so $(O)/lib/libawgstar.a \
		   $(O)/lib/pkgconfig/awgstar.pc $(O)/lib/pkgconfig/awgstar-uninstalled.pc \
		   $(O)/userlib/tests/awgstar_nodev_test $(O)/userlib/tests/awgstar_mock_test

NATIVE_TESTS	+= libawgstar-nodev=$(O)/userlib/tests/awgstar_nodev_test \
		   libawgstar-mock=$(O)/userlib/tests/awgstar_mock_test \
		   libawgstar-abi=userlib/tests/awgstar_abi_test.sh

$(O)/userlib/awg-obj/%.o: userlib/libawgstar/%.c $(LIBAWG_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(LIBAWG_CFLAGS) -c -o $@ $<

$(O)/lib/libawgstar.so.0: $(LIBAWG_OBJS)
	@mkdir -p $(dir $@)
	$(CC) -shared -Wl,-soname,libawgstar.so.0 -Wl,-z,defs -o $@ $^

$(O)/lib/libawgstar.so: | $(O)/lib/libawgstar.so.0
	ln -sf libawgstar.so.0 $@

# As libdlm.a: one relocatable object, internal symbols made local.
$(O)/lib/libawgstar.a: $(LIBAWG_OBJS)
	@mkdir -p $(dir $@)
	$(CC) -r -nostdlib -o $(O)/userlib/awg-obj/libawgstar-all.o $^
	$(OBJCOPY) --localize-hidden $(O)/userlib/awg-obj/libawgstar-all.o
	rm -f $@ && $(AR) rcs $@ $(O)/userlib/awg-obj/libawgstar-all.o

define LIBAWG_PC
Name: awgstar
Description: AWG-STAR shared-memory board emulation (/dev/awgstar), an RFM2g-style API
Version: $(LIBAWG_VERSION)
endef
export LIBAWG_PC

# <awgstar.h> includes <linux/awgstar.h>: installed beside it until the
# kernel's headers have it.
$(O)/lib/pkgconfig/awgstar.pc: userlib/userlib.mk
	@mkdir -p $(dir $@)
	{ echo 'prefix=$(LIBAWG_PREFIX)'; echo 'libdir=$${prefix}/lib'; \
	  echo 'includedir=$${prefix}/include'; echo; \
	  echo "$$LIBAWG_PC"; echo 'Cflags: -I$${includedir}'; \
	  echo 'Libs: -L$${libdir} -lawgstar'; } > $@

$(O)/lib/pkgconfig/awgstar-uninstalled.pc: userlib/userlib.mk
	@mkdir -p $(dir $@)
	{ echo 'libdir=$(O)/lib'; echo 'includedir=$(CURDIR)/userlib/include'; \
	  echo 'uapidir=$(CURDIR)/uapi'; echo; echo "$$LIBAWG_PC"; \
	  echo 'Cflags: -I$${includedir} -I$${uapidir}'; \
	  echo 'Libs: -L$${libdir} -Wl,-rpath,$${libdir} -lawgstar'; } > $@

# Native test: every call's argument checks, and awg_open without a board
# (ENOENT) or on a file that is not one (EPROTONOSUPPORT); no /dev/awgstar.
$(O)/userlib/tests/awgstar_nodev_test: userlib/tests/awgstar_nodev_test.c $(LIBAWG_HDRS) \
		$(O)/lib/libawgstar.a $(KSFT_INC)/kselftest_harness.h
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -I$(KSFT_INC) $(LIBDLM_INC) -o $@ $< $(O)/lib/libawgstar.a

# Native test: awg_barrier's numbers, retries and early events, and the
# event calls' id checks, against a board mocked in the test (it defines
# ioctl(2), which libawgstar.a's calls then reach).
$(O)/userlib/tests/awgstar_mock_test: userlib/tests/awgstar_mock_test.c $(LIBAWG_HDRS) \
		$(O)/lib/libawgstar.a $(KSFT_INC)/kselftest_harness.h
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -I$(KSFT_INC) $(LIBDLM_INC) -o $@ $< $(O)/lib/libawgstar.a

.PHONY: install-libawgstar
install-libawgstar: $(O)/lib/libawgstar.so.0 $(O)/lib/libawgstar.a \
		$(O)/lib/pkgconfig/awgstar.pc
	install -D -m 0755 $(O)/lib/libawgstar.so.0 \
		$(DESTDIR)$(LIBAWG_PREFIX)/lib/libawgstar.so.0
	ln -sf libawgstar.so.0 $(DESTDIR)$(LIBAWG_PREFIX)/lib/libawgstar.so
	install -m 0644 $(O)/lib/libawgstar.a $(DESTDIR)$(LIBAWG_PREFIX)/lib/libawgstar.a
	install -D -m 0644 userlib/include/awgstar.h \
		$(DESTDIR)$(LIBAWG_PREFIX)/include/awgstar.h
	install -D -m 0644 uapi/linux/awgstar.h \
		$(DESTDIR)$(LIBAWG_PREFIX)/include/linux/awgstar.h
	install -D -m 0644 $(O)/lib/pkgconfig/awgstar.pc \
		$(DESTDIR)$(LIBAWG_PREFIX)/lib/pkgconfig/awgstar.pc
	$(call install_man,3,$(LIBAWG_PREFIX),libawgstar.3 awg_*.3)
	$(call install_man,4,$(LIBAWG_PREFIX),awgstar.4)
	$(if $(DESTDIR),,-ldconfig)
