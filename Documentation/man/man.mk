# SPDX-License-Identifier: GPL-2.0
#
# Manual pages of the programs, included by the top-level Makefile.
# help2man makes each from the program's own --help and the first line of
# its --version (so the page cannot drift from the program) and
# Documentation/man/PROG.h2m (its NAME, FILES, EXAMPLES and SEE ALSO
# sections).
#
#   make man            $(O)/man/*.1, *.8 (needs help2man: make deps)
#   make install-tools  the daemons, dlmctl and their pages under
#                       TOOLS_PREFIX (/usr/local), DESTDIR honoured
#
# Read one before installing: man -l build/man/dlmd.8

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

NATIVE_TESTS	+= man=scripts/test-man.sh
