// SPDX-License-Identifier: GPL-2.0
/*
 * dlmctl - inspect /dev/dlm: its limits (DLM_IOC_GET_INFO), the module's
 * state and counters (sysfs: /sys/class/misc/dlm and its stats/), and the
 * counters dlmd writes to its --stats-file; create and remove the block
 * devices /dev/dlmbN (DLM_IOC_BLK_ADD, DLM_IOC_BLK_DEL).
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <linux/dlmem.h>

#define DLMCTL_VERSION "0.1.0"

static void usage(FILE *f)
{
	fprintf(f,
"Usage: dlmctl [OPTIONS] COMMAND\n"
"\n"
"Inspect the DLM remote-memory device; manage its block devices.\n"
"\n"
"Commands:\n"
"  info          what this kernel's /dev/dlm supports: API version,\n"
"                features, page sizes and limits (DLM_IOC_GET_INFO)\n"
"  status        is a daemon registered, spaces and frames in use, the\n"
"                module's parameters\n"
"  stats         the module's counters since it was loaded (faults,\n"
"                swap-ins/outs, drops, read-ahead, bytes) and latency per\n"
"                phase of the remote fault path: count, mean, p50, p90,\n"
"                p99 (bucket upper bounds, at most 25%% high) and max; then\n"
"                dlmd's own counters, if its stats file exists\n"
"  blk-add SIZE  create a block device /dev/dlmbN of SIZE bytes (suffix\n"
"                K, M, G or T: binary units) on dlmd's memory servers;\n"
"                prints /dev/dlmbN.  Needs root and a running dlmd\n"
"  blk-del N     remove /dev/dlmbN (refused while it is open: unmount\n"
"                or swapoff it first); its data is gone\n"
"  blk-list      the block devices and their sizes\n"
"\n"
"Options:\n"
"  -d, --device PATH   device node (default /dev/dlm)\n"
"  -s, --sysfs DIR     the module's sysfs directory (default\n"
"                      /sys/class/misc/dlm)\n"
"      --daemon-stats PATH\n"
"                      dlmd's --stats-file (default /run/dlmd.json)\n"
"  -j, --json          machine-readable output\n"
"  -q, --queue-depth N\n"
"                      blk-add: requests in flight per hardware queue\n"
"                      (1-256, default 32); each takes 128 KiB of dlmd's\n"
"                      frame pool (its local MB)\n"
"      --hw-queues N   blk-add: hardware queues (1-8, default min(CPUs, 4))\n"
"      --block-size N  blk-add: logical block size (only 4096 so far)\n"
"  -h, --help          this text\n"
"  -V, --version       dlmctl's version and the uapi version it speaks\n"
"\n"
"Exit status: 0 on success, 1 on error, 2 on a usage error.\n");
}

static int open_dev(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd >= 0)
		return fd;
	if (errno == ENOENT)
		fprintf(stderr, "dlmctl: %s: no such device; load the module: modprobe dlmem (or insmod kmod/dlmem.ko)\n",
			path);
	else if (errno == EACCES)
		fprintf(stderr, "dlmctl: %s: permission denied; run as root or join the device's group\n",
			path);
	else
		fprintf(stderr, "dlmctl: %s: %s\n", path, strerror(errno));
	return -1;
}

static void print_features(FILE *f, uint64_t feat)
{
	static const struct { uint64_t bit; const char *name; } names[] = {
		{ DLM_FEATURE_LOCAL, "local" },
		{ DLM_FEATURE_STATS, "stats" },
		{ DLM_FEATURE_REMOTE, "remote" },
		{ DLM_FEATURE_BLK, "blk" },
		{ DLM_FEATURE_SAME_FILLED, "same-filled" },
		{ DLM_FEATURE_PROTO_INLINE, "proto-inline" },
	};
	const char *sep = "";
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (feat & names[i].bit) {
			fprintf(f, "%s%s", sep, names[i].name);
			sep = ",";
			feat &= ~names[i].bit;
		}
	}
	if (feat)
		fprintf(f, "%sunknown:%#" PRIx64, sep, feat);
}

static int cmd_info(const char *dev, int json)
{
	struct dlm_info info;
	int fd = open_dev(dev);

	if (fd < 0)
		return 1;
	memset(&info, 0, sizeof(info));
	if (ioctl(fd, DLM_IOC_GET_INFO, &info)) {
		fprintf(stderr, "dlmctl: DLM_IOC_GET_INFO on %s: %s%s\n", dev,
			strerror(errno),
			errno == ENOTTY ? " (not a DLM device, or a module too old for this dlmctl)" : "");
		close(fd);
		return 1;
	}
	close(fd);

	if (json) {
		printf("{\"api\": %u, \"features\": \"", info.api);
		print_features(stdout, info.features);
		printf("\", \"page_size_min\": %u, \"page_size_default\": %llu, "
		       "\"page_size_max\": %llu, \"total_size_max\": %llu, "
		       "\"local_budget_max\": %llu}\n", info.page_size_min,
		       (unsigned long long)info.page_size_default,
		       (unsigned long long)info.page_size_max,
		       (unsigned long long)info.total_size_max,
		       (unsigned long long)info.local_budget_max);
		return 0;
	}
	printf("device            %s\n", dev);
	printf("api               %u (dlmctl speaks %u)\n", info.api,
	       DLM_API_VERSION);
	printf("features          ");
	print_features(stdout, info.features);
	printf("\n");
	printf("page size         default %llu KiB, min %u KiB, max %llu MiB\n",
	       (unsigned long long)info.page_size_default >> 10,
	       info.page_size_min >> 10,
	       (unsigned long long)info.page_size_max >> 20);
	printf("space size max    %llu GiB\n",
	       (unsigned long long)info.total_size_max >> 30);
	printf("local budget max  %llu MiB\n",
	       (unsigned long long)info.local_budget_max >> 20);
	return 0;
}

/* Read sysfs file DIR/NAME into BUF (trailing newline cut): 0 or -1. */
static int read_attr(const char *dir, const char *name, char *buf, size_t len)
{
	char path[4096];
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	n = fread(buf, 1, len - 1, f);
	fclose(f);
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		n--;
	buf[n] = 0;
	return 0;
}

static int check_sysfs(const char *dir)
{
	struct stat st;

	if (!stat(dir, &st))
		return 0;
	fprintf(stderr, "dlmctl: %s: %s; load the module: modprobe dlmem (or insmod kmod/dlmem.ko)\n",
		dir, strerror(errno));
	return -1;
}

static void print_daemon_stats(const char *path, int json)
{
	char buf[4096];
	struct stat st;
	size_t n;
	FILE *f = fopen(path, "r");

	if (!f) {
		if (json)
			printf(", \"dlmd\": null");
		else
			printf("\ndlmd stats        %s: %s (start dlmd with --stats-file %s)\n",
			       path, strerror(errno), path);
		return;
	}
	if (json) {
		printf(", \"dlmd\": ");
	} else {
		fstat(fileno(f), &st);
		printf("\ndlmd stats        %s, written %.0f s ago:\n", path,
		       difftime(time(NULL), st.st_mtime));
	}
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		fwrite(buf, 1, n, stdout);
	fclose(f);
}

static const char *const params[] = {
	"request_timeout_ms", "reserve_dpages", "readahead_dpages",
	"default_page_kb", "max_local_mb",
};

static int cmd_status(const char *sysfs, const char *dstats, int json)
{
	char daemon[32] = "?", spaces[32] = "?", frames[32] = "?", v[64];
	size_t i;

	if (check_sysfs(sysfs))
		return 1;
	read_attr(sysfs, "daemon", daemon, sizeof(daemon));
	read_attr(sysfs, "spaces", spaces, sizeof(spaces));
	read_attr(sysfs, "frames", frames, sizeof(frames));
	if (json)
		printf("{\"daemon_port\": %s, \"spaces\": %s, \"frames\": %s",
		       daemon, spaces, frames);
	else
		printf("daemon            %s\nspaces            %s\nlocal frames      %s (4 KiB pages held by spaces)\n",
		       strcmp(daemon, "0") ? "registered" :
		       "none (start dlmd: remote spaces are refused)",
		       spaces, frames);
	for (i = 0; i < sizeof(params) / sizeof(params[0]); i++) {
		if (read_attr("/sys/module/dlmem/parameters", params[i], v,
			      sizeof(v)))
			continue;
		if (json)
			printf(", \"%s\": %s", params[i], v);
		else
			printf("%-18s%s\n", params[i], v);
	}
	if (json) {
		print_daemon_stats(dstats, 1);
		printf("}\n");
	} else {
		print_daemon_stats(dstats, 0);
	}
	return 0;
}

static const char *const counters[] = {
	"faults", "populates", "sigbus", "swapins", "swapouts", "drops",
	"readaheads", "readaheads_unused", "store_waits", "lost", "bytes_in",
	"bytes_out", "same_filled", "fills_reused", "held_skips",
};

static const struct { const char *file, *what; } phases[] = {
	{ "lat_request", "fault -> request sent" },
	{ "lat_data", "request -> data in" },
	{ "lat_map", "data in -> mapped" },
	{ "lat_store", "store/drop -> done" },
};

static int cmd_stats(const char *sysfs, const char *dstats, int json)
{
	char dir[4096], v[256];
	unsigned long long x[6];
	size_t i, k;

	if (check_sysfs(sysfs))
		return 1;
	snprintf(dir, sizeof(dir), "%s/stats", sysfs);
	if (check_sysfs(dir))
		return 1;
	printf(json ? "{" : "");
	for (i = 0; i < sizeof(counters) / sizeof(counters[0]); i++) {
		if (read_attr(dir, counters[i], v, sizeof(v)))
			snprintf(v, sizeof(v), "0");
		if (json)
			printf("%s\"%s\": %s", i ? ", " : "", counters[i], v);
		else
			printf("%-18s%s\n", counters[i], v);
	}
	if (!json)
		printf("\n%-22s %9s %10s %10s %10s %10s %10s\n", "latency (us)",
		       "count", "mean", "p50", "p90", "p99", "max");
	for (i = 0; i < sizeof(phases) / sizeof(phases[0]); i++) {
		if (read_attr(dir, phases[i].file, v, sizeof(v)) ||
		    sscanf(v, "%llu %llu %llu %llu %llu %llu", &x[0], &x[1],
			   &x[2], &x[3], &x[4], &x[5]) != 6)
			continue;
		if (json) {
			printf(", \"%s\": {\"count\": %llu, \"mean_ns\": %llu, \"p50_ns\": %llu, \"p90_ns\": %llu, \"p99_ns\": %llu, \"max_ns\": %llu}",
			       phases[i].file, x[0], x[1], x[2], x[3], x[4], x[5]);
			continue;
		}
		printf("%-22s %9llu", phases[i].what, x[0]);
		for (k = 1; k < 6; k++)
			printf(" %10.1f", x[k] / 1000.0);
		printf("\n");
	}
	if (json) {
		print_daemon_stats(dstats, 1);
		printf("}\n");
	} else {
		print_daemon_stats(dstats, 0);
	}
	return 0;
}

/* SIZE with an optional K, M, G or T suffix (binary); 0 on error. */
static uint64_t parse_size(const char *s)
{
	static const char units[] = "KMGT";
	unsigned long long v;
	const char *u;
	char *end;

	errno = 0;
	if (!isdigit((unsigned char)*s))
		return 0;
	v = strtoull(s, &end, 0);
	if (errno)
		return 0;
	if (*end) {
		u = strchr(units, toupper((unsigned char)*end));
		if (!u || end[1])
			return 0;
		for (int i = 0; i <= u - units; i++) {
			if (v > UINT64_MAX / 1024)
				return 0;
			v *= 1024;
		}
	}
	return v;
}

static int parse_u32(const char *s, uint32_t *out)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || !isdigit((unsigned char)*s) || *end || v > UINT32_MAX)
		return -1;
	*out = v;
	return 0;
}

/* The handshake DLM_IOC_BLK_* need: 0, or -1 with a message. */
static int blk_open(const char *dev)
{
	struct dlm_api api = { .api = DLM_API_VERSION,
			       .features = DLM_FEATURE_BLK };
	int fd = open_dev(dev);

	if (fd < 0)
		return -1;
	if (ioctl(fd, DLM_IOC_API, &api)) {
		if (errno == EOPNOTSUPP)
			fprintf(stderr, "dlmctl: this dlmem.ko has no block devices (built without CONFIG_DLMEM_BLK)\n");
		else
			fprintf(stderr, "dlmctl: DLM_IOC_API: %s\n",
				strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

static int cmd_blk_add(const char *dev, const char *size,
		       const struct dlm_blk_add *opt)
{
	struct dlm_blk_add a = *opt;
	int fd, ret = 1;

	a.size = parse_size(size);
	if (!a.size) {
		fprintf(stderr, "dlmctl: blk-add: bad SIZE '%s' (e.g. 512M)\n",
			size);
		return 2;
	}
	fd = blk_open(dev);
	if (fd < 0)
		return 1;
	if (!ioctl(fd, DLM_IOC_BLK_ADD, &a)) {
		printf("/dev/dlmb%u\n", a.index);
		ret = 0;
	} else if (errno == ENOTCONN) {
		fprintf(stderr, "dlmctl: blk-add: no daemon: start dlmd -f MEMFILE first\n");
	} else if (errno == ENOSPC) {
		fprintf(stderr, "dlmctl: blk-add: the memory servers cannot hold %s; add servers or ask for less\n",
			size);
	} else if (errno == ENOMEM) {
		fprintf(stderr, "dlmctl: blk-add: dlmd's frame pool is too small for the queues: lower --queue-depth/--hw-queues or raise dlmd's local MB\n");
	} else if (errno == EPERM) {
		fprintf(stderr, "dlmctl: blk-add: needs CAP_SYS_ADMIN (run as root)\n");
	} else if (errno == EINVAL) {
		fprintf(stderr, "dlmctl: blk-add: invalid SIZE (a multiple of 4096), --queue-depth (1-256), --hw-queues (1-8) or --block-size (4096)\n");
	} else {
		fprintf(stderr, "dlmctl: blk-add: %s\n", strerror(errno));
	}
	close(fd);
	return ret;
}

static int cmd_blk_del(const char *dev, const char *index)
{
	struct dlm_blk_del d = { 0 };
	int fd, ret = 1;

	if (!strncmp(index, "/dev/dlmb", 9))
		index += 9;
	if (parse_u32(index, &d.index)) {
		fprintf(stderr, "dlmctl: blk-del: bad device number '%s'\n",
			index);
		return 2;
	}
	fd = blk_open(dev);
	if (fd < 0)
		return 1;
	if (!ioctl(fd, DLM_IOC_BLK_DEL, &d))
		ret = 0;
	else if (errno == EBUSY)
		fprintf(stderr, "dlmctl: blk-del: /dev/dlmb%u is in use: unmount or swapoff it first\n",
			d.index);
	else if (errno == ENOENT)
		fprintf(stderr, "dlmctl: blk-del: no /dev/dlmb%u\n", d.index);
	else
		fprintf(stderr, "dlmctl: blk-del: %s\n", strerror(errno));
	close(fd);
	return ret;
}

static int cmd_blk_list(int json)
{
	const char *sep = "";
	char buf[64], path[300];
	struct dirent *e;
	DIR *dir;

	dir = opendir("/sys/block");
	if (!dir) {
		fprintf(stderr, "dlmctl: /sys/block: %s\n", strerror(errno));
		return 1;
	}
	if (json)
		printf("[");
	while ((e = readdir(dir))) {
		if (strncmp(e->d_name, "dlmb", 4))
			continue;
		snprintf(path, sizeof(path), "/sys/block/%s", e->d_name);
		if (read_attr(path, "size", buf, sizeof(buf)))
			strcpy(buf, "0");
		if (json)
			printf("%s{\"device\": \"/dev/%s\", \"bytes\": %llu}",
			       sep, e->d_name, strtoull(buf, NULL, 10) * 512);
		else
			printf("/dev/%s %llu MiB\n", e->d_name,
			       strtoull(buf, NULL, 10) >> 11);
		sep = ", ";
	}
	closedir(dir);
	if (json)
		printf("]\n");
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "device", required_argument, NULL, 'd' },
		{ "sysfs", required_argument, NULL, 's' },
		{ "daemon-stats", required_argument, NULL, 'D' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ "queue-depth", required_argument, NULL, 'q' },
		{ "hw-queues", required_argument, NULL, 'Q' },
		{ "block-size", required_argument, NULL, 'B' },
		{ NULL, 0, NULL, 0 },
	};
	struct dlm_blk_add blk = { 0 };
	const char *dev = "/dev/dlm", *sysfs = "/sys/class/misc/dlm";
	const char *dstats = "/run/dlmd.json";
	int json = 0, c;

	while ((c = getopt_long(argc, argv, "d:s:jhVq:", opts, NULL)) != -1) {
		switch (c) {
		case 'q':
		case 'Q':
		case 'B':
			if (parse_u32(optarg, c == 'q' ? &blk.queue_depth :
				      c == 'Q' ? &blk.nr_hw_queues :
				      &blk.logical_block_size)) {
				fprintf(stderr, "dlmctl: bad number '%s'\n",
					optarg);
				return 2;
			}
			break;
		case 'd':
			dev = optarg;
			break;
		case 's':
			sysfs = optarg;
			break;
		case 'D':
			dstats = optarg;
			break;
		case 'j':
			json = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("dlmctl %s (uapi %u)\n", DLMCTL_VERSION,
			       DLM_API_VERSION);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc && (!strcmp(argv[optind], "blk-add") ||
			      !strcmp(argv[optind], "blk-del"))) {
		if (optind != argc - 2) {
			fprintf(stderr, "dlmctl: %s takes one argument (see dlmctl --help)\n",
				argv[optind]);
			return 2;
		}
		if (!strcmp(argv[optind], "blk-add"))
			return cmd_blk_add(dev, argv[optind + 1], &blk);
		return cmd_blk_del(dev, argv[optind + 1]);
	}
	if (optind != argc - 1) {
		fprintf(stderr, "dlmctl: expected one command (see dlmctl --help)\n");
		return 2;
	}
	if (!strcmp(argv[optind], "blk-list"))
		return cmd_blk_list(json);
	if (!strcmp(argv[optind], "info"))
		return cmd_info(dev, json);
	if (!strcmp(argv[optind], "status"))
		return cmd_status(sysfs, dstats, json);
	if (!strcmp(argv[optind], "stats"))
		return cmd_stats(sysfs, dstats, json);
	fprintf(stderr, "dlmctl: unknown command '%s' (see dlmctl --help)\n",
		argv[optind]);
	return 2;
}
