/* SPDX-License-Identifier: Apache-2.0 */
/* tlog-proof files: parsing, formatting, and making them from tiles. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "lib/base64.h"
#include "tlog/note.h"
#include "tlog/proof.h"
#include "tlog/tiles.h"

/* The next line [*pos, nl) of buf; -EINVAL when there is no newline. */
static int next_line(const char *buf, size_t len, size_t *pos, const char **line, size_t *llen)
{
	const char *nl;

	if (*pos >= len)
		return -EINVAL;
	nl = memchr(buf + *pos, '\n', len - *pos);
	if (!nl)
		return -EINVAL;
	*line = buf + *pos;
	*llen = (size_t)(nl - *line);
	*pos += *llen + 1;
	return 0;
}

int tlog_proof_parse(const char *buf, size_t len, struct tlog_proof *out)
{
	const char *line;
	size_t llen, pos = 0, n;

	memset(out, 0, sizeof(*out));
	if (next_line(buf, len, &pos, &line, &llen) || llen != strlen(TLOG_PROOF_HEADER) ||
	    memcmp(line, TLOG_PROOF_HEADER, llen))
		return -EINVAL;
	if (next_line(buf, len, &pos, &line, &llen))
		return -EINVAL;
	if (llen > 6 && !memcmp(line, "extra ", 6)) {
		if (kw_b64_decode(KW_B64_STD, line + 6, llen - 6, out->extra, sizeof(out->extra),
				    &out->extra_len))
			return -EINVAL;
		out->has_extra = true;
		if (next_line(buf, len, &pos, &line, &llen))
			return -EINVAL;
	}
	if (llen <= 6 || memcmp(line, "index ", 6) || tlog_parse_u64(line + 6, llen - 6, &out->index))
		return -EINVAL;
	for (;;) {
		if (next_line(buf, len, &pos, &line, &llen))
			return -EINVAL;
		if (llen == 0)
			break;
		if (out->count == TLOG_PROOF_MAX || llen != 44 ||
		    kw_b64_decode(KW_B64_STD, line, llen, out->path[out->count].b, TLOG_HASH_LEN, &n) ||
		    n != TLOG_HASH_LEN)
			return -EINVAL;
		out->count++;
	}
	if (pos >= len)
		return -EINVAL;
	out->checkpoint = buf + pos;
	out->checkpoint_len = len - pos;
	return 0;
}

int tlog_proof_format(const struct tlog_proof *p, struct kw_buf *out)
{
	char b64[KW_B64_LEN(TLOG_PROOF_EXTRA_MAX)], num[32];
	int ret = kw_buf_puts(out, TLOG_PROOF_HEADER "\n");

	if (!ret && p->has_extra && p->extra_len) {
		kw_b64_encode(KW_B64_STD, p->extra, p->extra_len, b64);
		ret = kw_buf_puts(out, "extra ");
		if (!ret)
			ret = kw_buf_puts(out, b64);
		if (!ret)
			ret = kw_buf_putc(out, '\n');
	}
	snprintf(num, sizeof(num), "index %" PRIu64 "\n", p->index);
	if (!ret)
		ret = kw_buf_puts(out, num);
	for (size_t i = 0; i < p->count && !ret; i++) {
		kw_b64_encode(KW_B64_STD, p->path[i].b, TLOG_HASH_LEN, b64);
		ret = kw_buf_puts(out, b64);
		if (!ret)
			ret = kw_buf_putc(out, '\n');
	}
	if (!ret)
		ret = kw_buf_putc(out, '\n');
	if (!ret)
		ret = kw_buf_append(out, p->checkpoint, p->checkpoint_len);
	return ret;
}

int tlog_prove(int dirfd, uint64_t index, uint64_t size, const struct tlog_hash *root,
	       const char *note, size_t note_len, struct tlog_proof *out)
{
	struct tlog_tiles t;
	struct tlog_hash leaf;
	int ret;

	memset(out, 0, sizeof(*out));
	if (index >= size)
		return -ERANGE;
	tlog_tiles_init(&t, dirfd, size);
	ret = tlog_tiles_read_node(&t, 0, index, &leaf);
	if (!ret)
		ret = tlog_inclusion_proof(tlog_tiles_read_node, &t, index, size, out->path,
					   &out->count);
	if (ret)
		return ret;
	/* Never hand out a proof the tiles do not back. */
	if (!tlog_inclusion_verify(index, size, &leaf, out->path, out->count, root))
		return -EBADMSG;
	out->index = index;
	memcpy(out->extra, leaf.b, TLOG_HASH_LEN);
	out->extra_len = TLOG_HASH_LEN;
	out->has_extra = true;
	out->checkpoint = note;
	out->checkpoint_len = note_len;
	return 0;
}
