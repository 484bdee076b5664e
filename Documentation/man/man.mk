# SPDX-License-Identifier: GPL-2.0
#
# Manual pages, included by the top-level Makefile.
#
# Programs (sections 1 and 8): help2man makes each from the program's own
# --help and the first line of its --version (so the page cannot drift
# from the program) and Documentation/man/PROG.h2m (its NAME, FILES,
# EXAMPLES and SEE ALSO sections).
#
# Libraries (section 3), devices (section 4) and the overview dlm(7):
# written by hand in Documentation/man/man3, man4 and man7; one page per
# group of functions, a one-line ".so" page for each other function it
# documents.  scripts/test-man3.sh holds them to the headers, the uapi
# and the libraries.
#
#   make man            $(O)/man/*.1, *.8 (needs help2man: make deps)
#   make install-tools  the daemons, dlmctl, their pages, dlmem(4), dlm(7) under
#                       TOOLS_PREFIX (/usr/local), DESTDIR honoured
#   make install-lib{dlm,fmpl,awgstar}   install each library's pages too
#
# Read one before installing: man -l build/man/dlmd.8,
# man -l Documentation/man/man3/dlm_startup.3

MAN_DIR		:= $(O)/man
MAN8_PROGS	:= dlmd dlm-memserver dlmctl awgstard
MAN1_PROGS	:= fmplrun
MAN8_PAGES	:= $(MAN8_PROGS:%=$(MAN_DIR)/%.8)
MAN1_PAGES	:= $(MAN1_PROGS:%=$(MAN_DIR)/%.1)
TOOLS_PREFIX	?= /usr/local
# The last commit's date, not today's, so that a rebuild gives the same page.
MAN_EPOCH	:= $(shell git -C $(CURDIR) log -1 --format=%ct 2>/dev/null)

.PHONY: man install-tools

man: $(MAN8_PAGES) $(MAN1_PAGES)

# make_man SECTION: $@ from the program $< and Documentation/man/$*.h2m.
define make_man
	@command -v help2man >/dev/null || { echo "help2man not found:" \
		"run 'make deps' (or apt-get install help2man)" >&2; exit 1; }
	@mkdir -p $(dir $@)
	v=$$($< --version | head -n 1) && \
	$(if $(MAN_EPOCH),SOURCE_DATE_EPOCH=$(MAN_EPOCH)) help2man -N -s $(1) \
		-S "$${v%% (*}" -m "DLM manual" -i Documentation/man/$*.h2m \
		--version-string="$$v" -o $@.tmp $<
	@mv $@.tmp $@
endef

$(MAN_DIR)/%.8: $(O)/bin/% Documentation/man/%.h2m Documentation/man/man.mk
	$(call make_man,8)

$(MAN_DIR)/%.1: $(O)/bin/% Documentation/man/%.h2m Documentation/man/man.mk
	$(call make_man,1)

# install_man SECTION PREFIX PATTERN...: the hand-written pages of
# SECTION whose names match (e.g. a library's functions and their links)
# under PREFIX/share/man/manSECTION.
define install_man
	install -d $(DESTDIR)$(2)/share/man/man$(1)
	install -m 0644 $(wildcard $(addprefix Documentation/man/man$(1)/,$(3))) \
		$(DESTDIR)$(2)/share/man/man$(1)/
endef

# dlmd runs dlmd-openmpi or dlmd-mpich from its own directory: installed
# beside it when they were built (libopenmpi-dev, libmpich-dev).
install-tools: $(addprefix $(O)/bin/,$(MAN8_PROGS)) $(MAN8_PAGES)
	install -d $(DESTDIR)$(TOOLS_PREFIX)/sbin $(DESTDIR)$(TOOLS_PREFIX)/bin \
		$(DESTDIR)$(TOOLS_PREFIX)/share/man/man8
	install -m 0755 $(O)/bin/dlmd $(O)/bin/dlm-memserver $(O)/bin/awgstard \
		$(DESTDIR)$(TOOLS_PREFIX)/sbin/
	for m in $(O)/bin/dlmd-openmpi $(O)/bin/dlmd-mpich; do \
		[[ ! -x $$m ]] || install -m 0755 $$m $(DESTDIR)$(TOOLS_PREFIX)/sbin/ || exit; \
	done
	install -m 0755 $(O)/bin/dlmctl $(DESTDIR)$(TOOLS_PREFIX)/bin/
	install -m 0644 $(MAN8_PAGES) $(DESTDIR)$(TOOLS_PREFIX)/share/man/man8/
	$(call install_man,7,$(TOOLS_PREFIX),dlm.7)
	$(call install_man,4,$(TOOLS_PREFIX),dlmem.4)

NATIVE_TESTS	+= man=scripts/test-man.sh man3=scripts/test-man3.sh
