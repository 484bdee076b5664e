// SPDX-License-Identifier: GPL-2.0
/*
 * dlmctl - inspect /dev/dlm.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <linux/dlmem.h>

#define DLMCTL_VERSION "0.1.0"

static void usage(FILE *f)
{
	fprintf(f,
"Usage: dlmctl [OPTIONS] COMMAND\n"
"\n"
"Inspect the DLM remote-memory device.\n"
"\n"
"Commands:\n"
"  info          what this kernel's /dev/dlm supports: API version,\n"
"                features, page sizes and limits (DLM_IOC_GET_INFO)\n"
"\n"
"Options:\n"
"  -d, --device PATH   device node (default /dev/dlm)\n"
"  -j, --json          machine-readable output\n"
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

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "device", required_argument, NULL, 'd' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *dev = "/dev/dlm";
	int json = 0, c;

	while ((c = getopt_long(argc, argv, "d:jhV", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			dev = optarg;
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
	if (optind != argc - 1) {
		fprintf(stderr, "dlmctl: expected one command (see dlmctl --help)\n");
		return 2;
	}
	if (!strcmp(argv[optind], "info"))
		return cmd_info(dev, json);
	fprintf(stderr, "dlmctl: unknown command '%s' (see dlmctl --help)\n",
		argv[optind]);
	return 2;
}
