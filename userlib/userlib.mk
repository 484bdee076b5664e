# SPDX-License-Identifier: GPL-2.0
#
# userlib.mk - libdlm, its example and tests; included by the top-level
# Makefile (which provides O, CC, USER_CFLAGS, KSFT_INC, USER_TARGETS,
# NATIVE_TESTS).  See userlib/README.md.
#
#   $(O)/lib/libdlm.so.0   shared library (soname libdlm.so.0) + libdlm.so
#   $(O)/lib/libdlm.a      static library, only the public API global
#   $(O)/lib/pkgconfig/    dlm.pc (for LIBDLM_PREFIX) and dlm-uninstalled.pc
#   $(O)/bin/matvec        the DLM-MPI paper's Fig. 3 program
#   make install-libdlm    install under LIBDLM_PREFIX (/usr/local), DESTDIR

LIBDLM_VERSION	:= 0.1.0
LIBDLM_PREFIX	?= /usr/local
OBJCOPY		?= objcopy

LIBDLM_SRCS	:= $(addprefix userlib/libdlm/,arena.c config.c errors.c space.c dlm.c)
LIBDLM_HDRS	:= userlib/include/dlm.h $(wildcard userlib/libdlm/*.h) uapi/linux/dlmem.h
LIBDLM_OBJS	:= $(patsubst userlib/libdlm/%.c,$(O)/userlib/obj/%.o,$(LIBDLM_SRCS))
LIBDLM_INC	:= -I$(CURDIR)/userlib/include
LIBDLM_CFLAGS	:= $(USER_CFLAGS) -std=c11 -Wextra -pthread $(LIBDLM_INC) \
		   -fPIC -fvisibility=hidden
LIBDLM_TESTS	:= $(O)/userlib/tests/arena_test $(O)/userlib/tests/config_test

USER_TARGETS	+= $(O)/lib/libdlm.so.0 $(O)/lib/libdlm.so $(O)/lib/libdlm.a \
		   $(O)/lib/pkgconfig/dlm.pc $(O)/lib/pkgconfig/dlm-uninstalled.pc \
		   $(O)/bin/matvec $(LIBDLM_TESTS)

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

# Selftests in the VM (selftests/libdlm/*_test.c, built by the top-level
# pattern rule) link the static library.
SELFTEST_LDLIBS_libdlm := $(LIBDLM_INC) -L$(O)/lib -l:libdlm.a
$(patsubst selftests/%.c,$(O)/selftests/%,$(wildcard selftests/libdlm/*_test.c)): \
		$(O)/lib/libdlm.a userlib/include/dlm.h

.PHONY: install-libdlm
install-libdlm: $(O)/lib/libdlm.so.0 $(O)/lib/libdlm.a $(O)/lib/pkgconfig/dlm.pc
	install -D -m 0755 $(O)/lib/libdlm.so.0 $(DESTDIR)$(LIBDLM_PREFIX)/lib/libdlm.so.0
	ln -sf libdlm.so.0 $(DESTDIR)$(LIBDLM_PREFIX)/lib/libdlm.so
	install -m 0644 $(O)/lib/libdlm.a $(DESTDIR)$(LIBDLM_PREFIX)/lib/libdlm.a
	install -D -m 0644 userlib/include/dlm.h $(DESTDIR)$(LIBDLM_PREFIX)/include/dlm.h
	install -D -m 0644 $(O)/lib/pkgconfig/dlm.pc \
		$(DESTDIR)$(LIBDLM_PREFIX)/lib/pkgconfig/dlm.pc
	$(if $(DESTDIR),,-ldconfig)
