// SPDX-License-Identifier: GPL-2.0
/*
 * test-memfile - the memfile parser: good files, comments, and every kind
 * of bad line answered with an error naming the file and line.  TAP.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "memfile.h"
#include "tap.h"

static char path[64];
static char err[1024];

/* Parse TEXT (LEN bytes; -1: strlen) as a memfile; the parser's result. */
static int parse(const char *text, long len, unsigned int flags,
		 struct memfile *mf)
{
	FILE *f = fopen(path, "w");

	if (!f) {
		perror(path);
		exit(1);
	}
	fwrite(text, 1, len < 0 ? strlen(text) : (size_t)len, f);
	fclose(f);
	err[0] = '\0';
	return memfile_load(path, flags, mf, err, sizeof(err));
}

/* TEXT must fail, with an error naming LINE (0: no line) containing WANT. */
static void bad(const char *what, const char *text, unsigned int flags,
		unsigned int line, const char *want)
{
	struct memfile mf;
	char prefix[128];
	int r = parse(text, -1, flags, &mf);

	if (line)
		snprintf(prefix, sizeof(prefix), "%s:%u: ", path, line);
	else
		snprintf(prefix, sizeof(prefix), "%s: ", path);
	if (!tap_ok(r == -1 && !strncmp(err, prefix, strlen(prefix)) &&
		    strstr(err, want) && mf.servers == NULL,
		    "%s: error names line %u and says '%s'", what, line, want))
		tap_diag("r=%d err=%s", r, err);
}

int main(void)
{
	struct memfile mf;
	char *big;
	int r, fd;

	strcpy(path, "/tmp/dlm-memfile-XXXXXX");
	fd = mkstemp(path);
	if (fd < 0) {
		perror("mkstemp");
		return 1;
	}
	close(fd);
	tap_plan(29);

	r = parse("1024\n4096 10.0.0.2:7777\n2048 host-b.example:7778\n", -1,
		  MEMFILE_NEED_ADDR, &mf);
	tap_ok(r == 0 && mf.local_mb == 1024 && mf.nservers == 2 &&
	       mf.servers[0].mb == 4096 && !strcmp(mf.servers[0].addr.host, "10.0.0.2") &&
	       !strcmp(mf.servers[0].addr.port, "7777") && mf.servers[0].line == 2 &&
	       mf.servers[1].mb == 2048 &&
	       !strcmp(mf.servers[1].addr.host, "host-b.example") &&
	       !strcmp(mf.servers[1].addr_str, "host-b.example:7778"),
	       "plain memfile: local size and two servers in rank order");
	memfile_free(&mf);

	r = parse("# DLM memfile\n\n   # indented comment\n512   # local MB\n"
		  "\t100 127.0.0.1:9000 # first server\n\n# trailing\n"
		  "200  [::1]:9001\n", -1, MEMFILE_NEED_ADDR, &mf);
	tap_ok(r == 0 && mf.local_mb == 512 && mf.local_line == 4 &&
	       mf.nservers == 2 && mf.servers[0].line == 5 &&
	       mf.servers[0].mb == 100 && mf.servers[1].line == 8 &&
	       !strcmp(mf.servers[1].addr.host, "::1") &&
	       !strcmp(mf.servers[1].addr.port, "9001"),
	       "comments, blank lines, tabs and an IPv6 server with line numbers");
	memfile_free(&mf);

	r = parse("64\r\n128 a:1\r\n256 b:2", -1, MEMFILE_NEED_ADDR, &mf);
	tap_ok(r == 0 && mf.local_mb == 64 && mf.nservers == 2 &&
	       mf.servers[1].mb == 256 && !strcmp(mf.servers[1].addr.port, "2"),
	       "CRLF line ends and no newline at the end");
	memfile_free(&mf);

	r = parse("64\n128\n256\n", -1, 0, &mf);
	tap_ok(r == 0 && mf.nservers == 2 && !mf.servers[0].has_addr &&
	       mf.servers[1].mb == 256,
	       "servers without addresses accepted when the transport needs none");
	memfile_free(&mf);

	r = parse("1073741824\n1 h:65535\n", -1, MEMFILE_NEED_ADDR, &mf);
	tap_ok(r == 0 && mf.local_mb == MEMFILE_MB_MAX &&
	       !strcmp(mf.servers[0].addr.port, "65535"),
	       "largest size and port accepted");
	memfile_free(&mf);

	bad("empty file", "", MEMFILE_NEED_ADDR, 0, "no local size");
	bad("comments only", "# nothing\n\n", MEMFILE_NEED_ADDR, 0,
	    "no local size");
	bad("no servers", "1024\n# none\n", MEMFILE_NEED_ADDR, 0,
	    "no memory servers");
	bad("local size not a number", "# x\nabc\n1 h:1\n", MEMFILE_NEED_ADDR,
	    2, "not a whole number");
	bad("local size zero", "0\n1 h:1\n", MEMFILE_NEED_ADDR, 1,
	    "at least 1 MB");
	bad("local size with an address", "1024 h:1\n1 h:2\n",
	    MEMFILE_NEED_ADDR, 1, "local size alone");
	bad("server size not a number", "1024\n4k h:1\n", MEMFILE_NEED_ADDR,
	    2, "not a whole number");
	bad("server size negative", "1024\n-5 h:1\n", MEMFILE_NEED_ADDR, 2,
	    "not a whole number");
	bad("server size zero", "1024\n1 h:1\n0 h:2\n", MEMFILE_NEED_ADDR, 3,
	    "at least 1 MB");
	bad("server size overflows", "1024\n99999999999999999999 h:1\n",
	    MEMFILE_NEED_ADDR, 2, "too large");
	bad("server size above the limit", "1024\n1073741825 h:1\n",
	    MEMFILE_NEED_ADDR, 2, "too large");
	bad("server without address", "1024\n1 h:1\n\n2\n", MEMFILE_NEED_ADDR,
	    4, "without an address");
	bad("address without port", "1024\n1 host\n", MEMFILE_NEED_ADDR, 2,
	    "missing :PORT");
	bad("port too large", "1024\n1 h:70000\n", MEMFILE_NEED_ADDR, 2,
	    "1-65535");
	bad("port zero", "1024\n1 h:0\n", MEMFILE_NEED_ADDR, 2, "1-65535");
	bad("port not a number", "1024\n1 h:http\n", MEMFILE_NEED_ADDR, 2,
	    "1-65535");
	bad("empty host", "1024\n1 :80\n", MEMFILE_NEED_ADDR, 2, "empty host");
	bad("IPv6 without brackets", "1024\n1 ::1:80\n", MEMFILE_NEED_ADDR, 2,
	    "brackets");
	bad("unclosed bracket", "1024\n1 [::1:80\n", MEMFILE_NEED_ADDR, 2,
	    "without ']'");
	bad("extra field", "1024\n1 h:1 tcp\n", MEMFILE_NEED_ADDR, 2,
	    "expected 'MB HOST:PORT', found 3 fields");
	bad("duplicate server", "1024\n1 h:1\n2 h:1\n", MEMFILE_NEED_ADDR, 3,
	    "already listed on line 2");

	big = malloc(3000);
	memset(big, '1', 2999);
	big[0] = '#';
	big[2999] = '\0';
	{
		char *text = malloc(3100);

		snprintf(text, 3100, "1024\n%s\n1 h:1\n", big);
		bad("line too long", text, MEMFILE_NEED_ADDR, 2, "longer than");
		free(text);
	}
	free(big);

	r = parse("1024\n1 h\0:1\n", 12, MEMFILE_NEED_ADDR, &mf);
	tap_ok(r == -1 && strstr(err, ":2: NUL byte") != NULL,
	       "NUL byte in a line: error names line 2");

	unlink(path);
	r = memfile_load(path, MEMFILE_NEED_ADDR, &mf, err, sizeof(err));
	tap_ok(r == -1 && strstr(err, path) && strstr(err, "No such file"),
	       "missing file: error names the file (%s)", err);
	return tap_done();
}
