# SPDX-License-Identifier: GPL-2.0
#
# selftests/bench/splash/splash.mk - the SPLASH-2-style kernels (RADIX,
# blocked LU, six-step FFT), each as an AWG-STAR program (libawgstar,
# static, one process per node) and an MPI program (Open MPI's mpicc, one
# rank per node); included by bench.mk.  Run by selftests/splash/ (VM),
# selftests/bench/awgstar.sh (make bench-awgstar) and native_test.sh.
#
#   $(BENCH_O)/splash/{radix,lu,fft}_awg   AWG-STAR versions
#   $(BENCH_O)/splash/{radix,lu,fft}_mpi   MPI versions (if mpicc.openmpi)
#   $(BENCH_O)/splash/mock/*_awg           the AWG versions over awg_mock.c

SPLASH_O	:= $(BENCH_O)/splash
SPLASH_DIR	:= selftests/bench/splash
SPLASH_KERNELS	:= radix lu fft
SPLASH_HDRS	:= $(SPLASH_DIR)/common.h
SPLASH_CFLAGS	:= $(USER_CFLAGS) -Wextra $(LIBDLM_INC)

SPLASH_AWG	:= $(addprefix $(SPLASH_O)/,$(addsuffix _awg,$(SPLASH_KERNELS)))
SPLASH_MOCK	:= $(addprefix $(SPLASH_O)/mock/,$(addsuffix _awg,$(SPLASH_KERNELS)))
SPLASH_MPI	:= $(if $(filter openmpi,$(DLMD_MPIS)),\
		     $(addprefix $(SPLASH_O)/,$(addsuffix _mpi,$(SPLASH_KERNELS))))

USER_TARGETS	+= $(SPLASH_AWG) $(SPLASH_MOCK) $(SPLASH_MPI)
NATIVE_TESTS	+= splash-native=$(SPLASH_DIR)/native_test.sh

$(SPLASH_O)/%_awg: $(SPLASH_DIR)/%_awg.c $(SPLASH_DIR)/awg_common.h $(SPLASH_HDRS) \
		$(LIBAWG_HDRS) $(O)/lib/libawgstar.a
	@mkdir -p $(dir $@)
	$(CC) $(SPLASH_CFLAGS) -o $@ $< $(O)/lib/libawgstar.a -lm

$(SPLASH_O)/mock/%_awg: $(SPLASH_DIR)/%_awg.c $(SPLASH_DIR)/awg_common.h $(SPLASH_HDRS) \
		$(SPLASH_DIR)/awg_mock.c $(LIBAWG_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(SPLASH_CFLAGS) -o $@ $< $(SPLASH_DIR)/awg_mock.c -lm

$(SPLASH_O)/%_mpi: $(SPLASH_DIR)/%_mpi.c $(SPLASH_DIR)/mpi_common.h $(SPLASH_HDRS)
	@mkdir -p $(dir $@)
	mpicc.openmpi $(SPLASH_CFLAGS) -o $@ $< -lm
