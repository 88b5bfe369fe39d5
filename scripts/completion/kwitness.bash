# SPDX-License-Identifier: Apache-2.0
# bash completion for kwitness and kwitnessd. Commands come from
# `kwitness --help`, verbs from `kwitness CMD --help`, and options from the
# option tables themselves (KWITNESS_LIST_OPTIONS=1, lib/options.h), so the
# completion follows the binary it completes. Installed by `make install`.

_kwitness_words() { # the options of the command line's command (and verb)
	KWITNESS_LIST_OPTIONS=1 "$@" 2>/dev/null | grep -E '^--'
}

_kwitness() {
	local cur=${COMP_WORDS[COMP_CWORD]} cmd=${COMP_WORDS[1]} verb=
	local kw=${COMP_WORDS[0]}

	if [ "$COMP_CWORD" -eq 1 ]; then
		mapfile -t COMPREPLY < <(compgen -W "$("$kw" --help 2>/dev/null |
			awk '/^Commands:/ { on = 1; next } on && NF { print $1 }')" -- "$cur")
		return
	fi
	# a word after the command that is no option is its verb (estate query)
	if [ "$COMP_CWORD" -ge 2 ] && [[ ${COMP_WORDS[2]} != -* ]]; then
		verb=${COMP_WORDS[2]}
	fi
	if [ "$COMP_CWORD" -eq 2 ] && [[ $cur != -* ]]; then
		local verbs
		verbs=$("$kw" "$cmd" --help 2>/dev/null | sed -n 's/^\(usage:\|      \) *kwitness '"$cmd"' \([a-z][a-z-]*\).*/\2/p' | sort -u)
		if [ -n "$verbs" ]; then
			mapfile -t COMPREPLY < <(compgen -W "$verbs" -- "$cur")
			return
		fi
	fi
	if [[ $cur == -* ]]; then
		mapfile -t COMPREPLY < <(compgen -W "$(_kwitness_words "$kw" "$cmd" ${verb:+"$verb"})" -- "$cur")
		return
	fi
	mapfile -t COMPREPLY < <(compgen -f -- "$cur")
}

_kwitnessd() {
	local cur=${COMP_WORDS[COMP_CWORD]}

	if [[ $cur == -* ]]; then
		mapfile -t COMPREPLY < <(compgen -W "$(_kwitness_words "${COMP_WORDS[0]}")" -- "$cur")
	else
		mapfile -t COMPREPLY < <(compgen -f -- "$cur")
	fi
}

complete -o filenames -F _kwitness kwitness
complete -o filenames -F _kwitnessd kwitnessd
