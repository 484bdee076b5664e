# SPDX-License-Identifier: GPL-2.0
#
# daemon/daemon.mk - dlmd, dlm-memserver and their native tests.
# Included by the top-level Makefile; uses O, CC and USER_CFLAGS from it.

DAEMON_O	:= $(O)/daemon
DAEMON_TO	:= $(O)/daemon/tests
DAEMON_CFLAGS	:= $(USER_CFLAGS) -std=gnu11 -D_GNU_SOURCE -Wextra -pthread \
		   -MMD -MP
DAEMON_NL_CFLAGS := $(shell pkg-config --cflags libnl-genl-3.0 2>/dev/null)
DAEMON_NL_LIBS	:= $(shell pkg-config --libs libnl-genl-3.0 2>/dev/null)
DAEMON_NL_CHECK	= @test -n "$(DAEMON_NL_LIBS)" || { echo "libnl-genl-3.0 not" \
		  "found: apt-get install libnl-3-dev libnl-genl-3-dev" >&2; exit 1; }

daemon_objs	= $(addprefix $(DAEMON_O)/,$(addsuffix .o,$(1)))

# The verbs transport needs rdma-core's development files; without them
# dlmd and dlm-memserver are built without it and say so if asked for it.
DAEMON_VERBS_LIBS := $(shell pkg-config --libs libibverbs librdmacm 2>/dev/null)
ifneq ($(DAEMON_VERBS_LIBS),)
DAEMON_VERBS_FLAGS := -DDLM_WITH_VERBS
DAEMON_VERBS	:= verbs_util
endif

DAEMON_COMMON	:= log wire netaddr cpusched schedguard
DLMD_SHARED	:= nl dispatch placement memfile transport_tcp transport_mirror transport_io stats mpi_opts \
		   $(DAEMON_COMMON)
DLMD_OBJS	:= $(call daemon_objs,dlmd $(DLMD_SHARED) \
		     $(if $(DAEMON_VERBS),transport_verbs $(DAEMON_VERBS)))
MEMSERVER_OBJS	:= $(call daemon_objs,memserver $(DAEMON_COMMON) \
		     $(if $(DAEMON_VERBS),memserver_verbs $(DAEMON_VERBS)))

DAEMON_TESTS	:= $(addprefix $(DAEMON_TO)/,test-memfile test-placement \
		     test-stats test-nlparse memserver-client test-dispatch \
		     test-mirror test-tcp test-wire test-mpiopts)

USER_TARGETS	+= $(O)/bin/dlmd $(O)/bin/dlm-memserver $(DAEMON_TESTS)

# The daemon's native tests (make check-asan runs them under the sanitizers).
DAEMON_NATIVE	:= daemon-memfile=$(DAEMON_TO)/test-memfile \
		   daemon-placement=$(DAEMON_TO)/test-placement \
		   daemon-stats=$(DAEMON_TO)/test-stats \
		   daemon-nlparse=$(DAEMON_TO)/test-nlparse \
		   daemon-memserver=selftests/daemon/test-memserver.sh \
		   daemon-dispatch=selftests/daemon/test-dispatch.sh \
		   daemon-mirror=selftests/daemon/test-mirror.sh \
		   daemon-tcp=selftests/daemon/test-tcp.sh \
		   daemon-wire=$(DAEMON_TO)/test-wire \
		   daemon-mpiopts=$(DAEMON_TO)/test-mpiopts \
		   daemon-dlmd=selftests/daemon/test-dlmd.sh \
		   daemon-dlmctl=selftests/daemon/test-dlmctl.sh \
		   daemon-mpiserver=selftests/daemon/test-mpi-server.sh
NATIVE_TESTS	+= $(DAEMON_NATIVE)

$(DAEMON_O)/%.o: daemon/%.c
	@mkdir -p $(dir $@)
	$(CC) $(DAEMON_CFLAGS) $(DAEMON_NL_CFLAGS) $(DAEMON_VERBS_FLAGS) -c -o $@ $<

$(DAEMON_TO)/%.o: selftests/daemon/%.c
	@mkdir -p $(dir $@)
	$(CC) $(DAEMON_CFLAGS) $(DAEMON_NL_CFLAGS) -Idaemon -c -o $@ $<

$(O)/bin/dlmd: $(DLMD_OBJS)
	$(DAEMON_NL_CHECK)
	@mkdir -p $(dir $@)
	$(CC) $(DAEMON_CFLAGS) -o $@ $^ $(DAEMON_NL_LIBS) $(DAEMON_VERBS_LIBS)

$(O)/bin/dlm-memserver: $(MEMSERVER_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(DAEMON_CFLAGS) -o $@ $^ $(DAEMON_VERBS_LIBS)

$(DAEMON_TO)/test-memfile: $(DAEMON_TO)/test-memfile.o \
		$(call daemon_objs,memfile netaddr)
$(DAEMON_TO)/test-placement: $(DAEMON_TO)/test-placement.o \
		$(call daemon_objs,placement)
$(DAEMON_TO)/test-stats: $(DAEMON_TO)/test-stats.o $(call daemon_objs,stats log)
$(DAEMON_TO)/test-nlparse: $(DAEMON_TO)/test-nlparse.o \
		$(call daemon_objs,nl stats log)
$(DAEMON_TO)/memserver-client: $(DAEMON_TO)/memserver-client.o \
		$(call daemon_objs,wire netaddr log)
$(DAEMON_TO)/test-dispatch: $(DAEMON_TO)/test-dispatch.o \
		$(call daemon_objs,dispatch placement transport_tcp stats \
		  $(DAEMON_COMMON))

$(DAEMON_TO)/test-mirror: $(DAEMON_TO)/test-mirror.o \
		$(call daemon_objs,transport_mirror transport_io transport_tcp stats \
		  $(DAEMON_COMMON))

$(DAEMON_TO)/test-tcp: $(DAEMON_TO)/test-tcp.o \
		$(call daemon_objs,transport_tcp transport_io stats $(DAEMON_COMMON))

$(DAEMON_TO)/test-wire: $(DAEMON_TO)/test-wire.o $(call daemon_objs,wire)

$(DAEMON_TO)/test-mpiopts: $(DAEMON_TO)/test-mpiopts.o $(call daemon_objs,mpi_opts)

$(DAEMON_TESTS):
	$(DAEMON_NL_CHECK)
	$(CC) $(DAEMON_CFLAGS) -o $@ $^ $(DAEMON_NL_LIBS)

# ---- dlmd for MPI: dlmd-openmpi and dlmd-mpich ------------------------------
# The same dlmd with the mpi transport, one build per MPI found (plain dlmd
# execs the one matching the mpirun that started it).  Only the mpi_*.c
# and transport_mpi.c files see mpi.h; they are built with that MPI's mpicc.

DLMD_MPI_SRCS	:= transport_mpi mpi_init mpi_server
DLMD_MPIS	:= $(foreach m,openmpi mpich,$(if $(shell command -v mpicc.$(m)),$(m)))

define dlmd_mpi_rules
$(DAEMON_O)/$(1)/dlmd.o: daemon/dlmd.c
	@mkdir -p $$(dir $$@)
	$$(CC) $$(DAEMON_CFLAGS) $$(DAEMON_NL_CFLAGS) -DDLM_WITH_MPI -c -o $$@ $$<

$(DAEMON_O)/$(1)/%.o: daemon/%.c
	@mkdir -p $$(dir $$@)
	mpicc.$(1) $$(DAEMON_CFLAGS) -c -o $$@ $$<

$(O)/bin/dlmd-$(1): $(DAEMON_O)/$(1)/dlmd.o \
		$(addprefix $(DAEMON_O)/$(1)/,$(addsuffix .o,$(DLMD_MPI_SRCS))) \
		$(call daemon_objs,$(DLMD_SHARED))
	$$(DAEMON_NL_CHECK)
	@mkdir -p $$(dir $$@)
	mpicc.$(1) $$(DAEMON_CFLAGS) -o $$@ $$^ $$(DAEMON_NL_LIBS)

USER_TARGETS	+= $(O)/bin/dlmd-$(1)

# A memory server rank against a rank 0 written in the test.
$(DAEMON_TO)/$(1)/test-mpi-server.o: selftests/daemon/test-mpi-server.c
	@mkdir -p $$(dir $$@)
	mpicc.$(1) $$(DAEMON_CFLAGS) -Idaemon -c -o $$@ $$<

$(DAEMON_TO)/test-mpi-server-$(1): $(DAEMON_TO)/$(1)/test-mpi-server.o \
		$(DAEMON_O)/$(1)/mpi_server.o $(DAEMON_O)/$(1)/mpi_init.o \
		$(call daemon_objs,mpi_opts log wire)
	mpicc.$(1) $$(DAEMON_CFLAGS) -o $$@ $$^

USER_TARGETS	+= $(DAEMON_TO)/test-mpi-server-$(1)
endef
$(foreach m,$(DLMD_MPIS),$(eval $(call dlmd_mpi_rules,$(m))))

-include $(wildcard $(DAEMON_O)/*.d $(DAEMON_TO)/*.d $(DAEMON_O)/*/*.d $(DAEMON_TO)/*/*.d)

# awgstard: the AWG-STAR ring between boards (/dev/awgstar).
AWGSTARD_OBJS	:= $(call daemon_objs,awgstard awg_link awg_link_tcp log netaddr \
		     $(if $(DAEMON_VERBS),awg_link_verbs $(DAEMON_VERBS)))
USER_TARGETS	+= $(O)/bin/awgstard

$(O)/bin/awgstard: $(AWGSTARD_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(DAEMON_CFLAGS) -o $@ $^ $(DAEMON_VERBS_LIBS)
