// SPDX-License-Identifier: GPL-2.0
/*
 * kvm-probe - check that /dev/kvm can really run a guest.
 *
 * Some machines expose /dev/kvm although KVM does not really work there
 * (nested virtualisation with missing features, KVM_RUN that never
 * returns, ...).  QEMU then aborts or hangs, so vm-run asks this program
 * first and falls back to TCG when it fails.
 *
 * Checks, in order:
 *  1. the KVM API version, VM and vCPU creation;
 *  2. what QEMU's "-cpu host" (used by virtme-ng) does first: set the
 *     supported CPUID, and write the host's feature MSRs
 *     (IA32_ARCH_CAPABILITIES, microcode revision) into the vCPU;
 *  3. real-mode code: a single "hlt" must give KVM_EXIT_HLT;
 *  4. 64-bit long mode with paging on a second vCPU: a store to memory,
 *     an "out" (KVM_EXIT_IO with the right data), then "hlt".
 *
 * A watchdog (alarm, 5 s or the first argument in seconds) turns a hang
 * into a failure.  Callers should still wrap it in timeout(1): a vCPU
 * stuck in an uninterruptible state ignores signals.
 *
 * Exit codes: 0 KVM works, 1 KVM unusable, 2 timed out.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#define GUEST_MEM_SIZE		0x200000	/* one 2 MiB page at GPA 0 */
#define GUEST_PML4		0x1000
#define GUEST_PDPT		0x2000
#define GUEST_PD		0x3000
#define GUEST_CODE16		0x7000
#define GUEST_CODE64		0x8000
#define GUEST_DATA		0x9000

#define PROBE_PORT		0x10
#define PROBE_BYTE		0x42
#define PROBE_WORD		0xdeadbeefU

#define MSR_IA32_UCODE_REV		0x0000008b
#define MSR_IA32_ARCH_CAPABILITIES	0x0000010a
#define CPUID7_EDX_ARCH_CAPABILITIES	(1U << 29)

#define X86_CR0_PE		(1ULL << 0)
#define X86_CR0_PG		(1ULL << 31)
#define X86_CR4_PAE		(1ULL << 5)
#define EFER_LME		(1ULL << 8)
#define EFER_LMA		(1ULL << 10)
#define PTE_PRESENT		(1ULL << 0)
#define PTE_RW			(1ULL << 1)
#define PTE_PS			(1ULL << 7)

#define MAX_CPUID_ENTRIES	256
#define MAX_FEATURE_MSRS	1024

static const uint8_t code16[] = {
	0xf4,					/* hlt */
};

static const uint8_t code64[] = {
	0xc7, 0x04, 0x25,			/* movl $PROBE_WORD, GUEST_DATA */
	GUEST_DATA & 0xff, (GUEST_DATA >> 8) & 0xff, 0x00, 0x00,
	PROBE_WORD & 0xff, (PROBE_WORD >> 8) & 0xff,
	(PROBE_WORD >> 16) & 0xff, (PROBE_WORD >> 24) & 0xff,
	0xb0, PROBE_BYTE,			/* mov $PROBE_BYTE, %al */
	0xe6, PROBE_PORT,			/* out %al, $PROBE_PORT */
	0xf4,					/* hlt */
};

struct cpuid_buf {
	struct kvm_cpuid2 hdr;
	struct kvm_cpuid_entry2 entries[MAX_CPUID_ENTRIES];
};

struct msr_list_buf {
	struct kvm_msr_list hdr;
	uint32_t indices[MAX_FEATURE_MSRS];
};

struct one_msr {
	struct kvm_msrs hdr;
	struct kvm_msr_entry entry;
};

struct probe {
	int kvm;
	int vm;
	long run_size;
	uint8_t *mem;
	struct cpuid_buf cpuid;
};

static void on_alarm(int sig)
{
	static const char msg[] = "kvm-probe: FAIL: timed out (KVM_RUN hangs?)\n";
	ssize_t n;

	(void)sig;
	n = write(STDERR_FILENO, msg, sizeof(msg) - 1);
	(void)n;
	_exit(2);
}

static int fail_errno(const char *what)
{
	fprintf(stderr, "kvm-probe: FAIL: %s: %s\n", what, strerror(errno));
	return 1;
}

static int fail(const char *what)
{
	fprintf(stderr, "kvm-probe: FAIL: %s\n", what);
	return 1;
}

static const struct kvm_cpuid_entry2 *find_cpuid(const struct probe *p,
						 uint32_t function,
						 uint32_t index)
{
	uint32_t i;

	for (i = 0; i < p->cpuid.hdr.nent; i++) {
		const struct kvm_cpuid_entry2 *e = &p->cpuid.entries[i];

		if (e->function == function && e->index == index)
			return e;
	}
	return NULL;
}

static int has_feature_msr(const struct msr_list_buf *list, uint32_t msr)
{
	uint32_t i;

	for (i = 0; i < list->hdr.nmsrs; i++)
		if (list->indices[i] == msr)
			return 1;
	return 0;
}

/* Copy one feature MSR from the system fd into the vCPU, as QEMU does. */
static int copy_feature_msr(struct probe *p, int vcpu, uint32_t msr)
{
	struct one_msr m;

	memset(&m, 0, sizeof(m));
	m.hdr.nmsrs = 1;
	m.entry.index = msr;
	if (ioctl(p->kvm, KVM_GET_MSRS, &m) != 1) {
		fprintf(stderr, "kvm-probe: FAIL: cannot read feature MSR %#x\n",
			msr);
		return 1;
	}
	if (ioctl(vcpu, KVM_SET_MSRS, &m) != 1) {
		fprintf(stderr,
			"kvm-probe: FAIL: vCPU rejects feature MSR %#x = %#llx (QEMU -cpu host would abort)\n",
			msr, (unsigned long long)m.entry.data);
		return 1;
	}
	return 0;
}

static int setup_cpu_features(struct probe *p, int vcpu)
{
	const struct kvm_cpuid_entry2 *leaf7;
	struct msr_list_buf msrs;

	if (ioctl(vcpu, KVM_SET_CPUID2, &p->cpuid))
		return fail_errno("KVM_SET_CPUID2");

	if (ioctl(p->kvm, KVM_CHECK_EXTENSION, KVM_CAP_GET_MSR_FEATURES) <= 0)
		return 0;

	memset(&msrs, 0, sizeof(msrs));
	msrs.hdr.nmsrs = MAX_FEATURE_MSRS;
	if (ioctl(p->kvm, KVM_GET_MSR_FEATURE_INDEX_LIST, &msrs))
		return fail_errno("KVM_GET_MSR_FEATURE_INDEX_LIST");

	leaf7 = find_cpuid(p, 7, 0);
	if (leaf7 && (leaf7->edx & CPUID7_EDX_ARCH_CAPABILITIES) &&
	    has_feature_msr(&msrs, MSR_IA32_ARCH_CAPABILITIES) &&
	    copy_feature_msr(p, vcpu, MSR_IA32_ARCH_CAPABILITIES))
		return 1;
	if (has_feature_msr(&msrs, MSR_IA32_UCODE_REV) &&
	    copy_feature_msr(p, vcpu, MSR_IA32_UCODE_REV))
		return 1;
	return 0;
}

static int create_vcpu(struct probe *p, unsigned long id, int *vcpu,
		       struct kvm_run **run)
{
	*vcpu = ioctl(p->vm, KVM_CREATE_VCPU, id);
	if (*vcpu < 0)
		return fail_errno("KVM_CREATE_VCPU");

	*run = mmap(NULL, (size_t)p->run_size, PROT_READ | PROT_WRITE,
		    MAP_SHARED, *vcpu, 0);
	if (*run == MAP_FAILED)
		return fail_errno("mmap kvm_run");

	return setup_cpu_features(p, *vcpu);
}

static int kvm_run_once(int vcpu, struct kvm_run *run, uint32_t want,
			const char *stage)
{
	if (ioctl(vcpu, KVM_RUN, NULL))
		return fail_errno("KVM_RUN");
	if (run->exit_reason != want) {
		fprintf(stderr,
			"kvm-probe: FAIL: %s: exit reason %u, want %u\n",
			stage, run->exit_reason, want);
		return 1;
	}
	return 0;
}

/* Stage 3: real mode, CS:IP = 0:GUEST_CODE16, "hlt". */
static int test_real_mode(struct probe *p)
{
	struct kvm_sregs sregs;
	struct kvm_regs regs;
	struct kvm_run *run;
	int vcpu;

	if (create_vcpu(p, 0, &vcpu, &run))
		return 1;

	memcpy(p->mem + GUEST_CODE16, code16, sizeof(code16));

	if (ioctl(vcpu, KVM_GET_SREGS, &sregs))
		return fail_errno("KVM_GET_SREGS");
	sregs.cs.base = 0;
	sregs.cs.selector = 0;
	if (ioctl(vcpu, KVM_SET_SREGS, &sregs))
		return fail_errno("KVM_SET_SREGS (real mode)");

	memset(&regs, 0, sizeof(regs));
	regs.rip = GUEST_CODE16;
	regs.rflags = 0x2;	/* bit 1 is reserved and must be set */
	if (ioctl(vcpu, KVM_SET_REGS, &regs))
		return fail_errno("KVM_SET_REGS");

	return kvm_run_once(vcpu, run, KVM_EXIT_HLT, "real mode hlt");
}

/* Stage 4: 64-bit long mode, identity-mapped 2 MiB page. */
static int test_long_mode(struct probe *p)
{
	uint64_t *pml4 = (uint64_t *)(p->mem + GUEST_PML4);
	uint64_t *pdpt = (uint64_t *)(p->mem + GUEST_PDPT);
	uint64_t *pd = (uint64_t *)(p->mem + GUEST_PD);
	struct kvm_segment seg;
	struct kvm_sregs sregs;
	struct kvm_regs regs;
	struct kvm_run *run;
	uint32_t word;
	uint8_t byte;
	int vcpu;

	if (create_vcpu(p, 1, &vcpu, &run))
		return 1;

	pml4[0] = GUEST_PDPT | PTE_PRESENT | PTE_RW;
	pdpt[0] = GUEST_PD | PTE_PRESENT | PTE_RW;
	pd[0] = 0 | PTE_PRESENT | PTE_RW | PTE_PS;
	memcpy(p->mem + GUEST_CODE64, code64, sizeof(code64));

	if (ioctl(vcpu, KVM_GET_SREGS, &sregs))
		return fail_errno("KVM_GET_SREGS");

	memset(&seg, 0, sizeof(seg));
	seg.limit = 0xffffffff;
	seg.present = 1;
	seg.s = 1;
	seg.g = 1;
	seg.selector = 0x08;
	seg.type = 11;		/* code: execute/read, accessed */
	seg.l = 1;
	sregs.cs = seg;
	seg.selector = 0x10;
	seg.type = 3;		/* data: read/write, accessed */
	seg.l = 0;
	seg.db = 1;
	sregs.ds = seg;
	sregs.es = seg;
	sregs.fs = seg;
	sregs.gs = seg;
	sregs.ss = seg;

	sregs.cr3 = GUEST_PML4;
	sregs.cr4 = X86_CR4_PAE;
	sregs.cr0 = X86_CR0_PE | X86_CR0_PG;
	sregs.efer = EFER_LME | EFER_LMA;
	if (ioctl(vcpu, KVM_SET_SREGS, &sregs))
		return fail_errno("KVM_SET_SREGS (long mode)");

	memset(&regs, 0, sizeof(regs));
	regs.rip = GUEST_CODE64;
	regs.rsp = GUEST_CODE64;
	regs.rflags = 0x2;
	if (ioctl(vcpu, KVM_SET_REGS, &regs))
		return fail_errno("KVM_SET_REGS");

	if (kvm_run_once(vcpu, run, KVM_EXIT_IO, "long mode out"))
		return 1;
	byte = *((uint8_t *)run + run->io.data_offset);
	if (run->io.direction != KVM_EXIT_IO_OUT || run->io.port != PROBE_PORT ||
	    run->io.size != 1 || byte != PROBE_BYTE) {
		fprintf(stderr,
			"kvm-probe: FAIL: long mode out: got port %#x size %u byte %#x\n",
			run->io.port, run->io.size, byte);
		return 1;
	}

	if (kvm_run_once(vcpu, run, KVM_EXIT_HLT, "long mode hlt"))
		return 1;

	memcpy(&word, p->mem + GUEST_DATA, sizeof(word));
	if (word != PROBE_WORD)
		return fail("long mode store did not reach guest memory");
	return 0;
}

int main(int argc, char **argv)
{
	struct kvm_userspace_memory_region region;
	struct sigaction sa;
	unsigned int secs = 5;
	struct probe p;
	int ret;

	if (argc > 1)
		secs = (unsigned int)strtoul(argv[1], NULL, 10);
	if (!secs)
		secs = 5;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGALRM, &sa, NULL))
		return fail_errno("sigaction");
	alarm(secs);

	memset(&p, 0, sizeof(p));
	p.kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (p.kvm < 0)
		return fail_errno("open /dev/kvm");

	ret = ioctl(p.kvm, KVM_GET_API_VERSION, NULL);
	if (ret != KVM_API_VERSION) {
		fprintf(stderr, "kvm-probe: FAIL: KVM API version %d, want %d\n",
			ret, KVM_API_VERSION);
		return 1;
	}

	p.vm = ioctl(p.kvm, KVM_CREATE_VM, 0UL);
	if (p.vm < 0)
		return fail_errno("KVM_CREATE_VM");

	p.run_size = ioctl(p.kvm, KVM_GET_VCPU_MMAP_SIZE, NULL);
	if (p.run_size < (long)sizeof(struct kvm_run))
		return fail_errno("KVM_GET_VCPU_MMAP_SIZE");

	p.cpuid.hdr.nent = MAX_CPUID_ENTRIES;
	if (ioctl(p.kvm, KVM_GET_SUPPORTED_CPUID, &p.cpuid))
		return fail_errno("KVM_GET_SUPPORTED_CPUID");

	p.mem = mmap(NULL, GUEST_MEM_SIZE, PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (p.mem == MAP_FAILED)
		return fail_errno("mmap guest memory");

	memset(&region, 0, sizeof(region));
	region.slot = 0;
	region.guest_phys_addr = 0;
	region.memory_size = GUEST_MEM_SIZE;
	region.userspace_addr = (uintptr_t)p.mem;
	if (ioctl(p.vm, KVM_SET_USER_MEMORY_REGION, &region))
		return fail_errno("KVM_SET_USER_MEMORY_REGION");

	if (test_real_mode(&p) || test_long_mode(&p))
		return 1;
	alarm(0);

	printf("kvm-probe: OK: KVM runs real-mode and long-mode guest code\n");
	return 0;
}
