#!/bin/bash
# scripts/check-circles.sh - no circle of files inside a folder: within agent/ and within
# controller/ the graph "file A -> file B when A calls a function, uses a global, or includes
# a header of B" must have no cycle. Prints every cycle with one symbol per edge; exit 1 when
# a cycle is not in the allow-list. Run with --help for the details.
set -u
usage() {
    cat <<'EOF'
usage: scripts/check-circles.sh [-C DIR] [--allow FILE | --no-allow] [--edges] [FOLDER...]

Checks that the files of each FOLDER (default: agent controller) do not depend on each other
in a circle. The nodes are the FOLDER/*.c files; FOLDER/foo.h belongs to FOLDER/foo.c when
that file exists (a module header). A header without a .c of its name (agent/agent.h,
agent/serve-internal.h, controller/ctrl-internal.h) is shared: including it makes no edge, only
the uses of what it declares do.

  A -> B  when A (its .c or its module header) names a non-static function or global defined
          in B.c (comments, strings and member names after . or -> are not uses), or includes
          B's module header.

Definitions are read from clang-formatted code: a function's name at column 0 followed by its
parameters and `{` (the return type on the line before, without `static`); a global is a
column-0 declaration with `=` or `;` that is not static, extern, typedef or a bare struct/enum.

Every cycle (elementary circuit) is printed as its files, then each edge with one example
symbol. A cycle listed in the allow-list (default scripts/check-circles.allow under DIR, one
cycle a line: "a.c -> b.c -> a.c", # comments) is reported as a warning; any other cycle fails.
Allow-list lines that no longer occur are reported so the list can shrink.

  -C DIR        check the tree at DIR (default: the current directory)
  --allow FILE  the allow-list to use
  --no-allow    no allow-list: every cycle fails
  --edges       also print every edge with its example symbol
  -h, --help    this text

Exit status: 0 no cycle outside the allow-list, 1 a cycle outside it, 2 usage error.
EOF
}
dir=. allow='' noallow=0 edges=0 folders=()
while [ $# -gt 0 ]; do
    case $1 in
        -C) dir=${2:?-C needs a directory}; shift 2 ;;
        --allow) allow=${2:?--allow needs a file}; shift 2 ;;
        --no-allow) noallow=1; shift ;;
        --edges) edges=1; shift ;;
        -h|--help) usage; exit 0 ;;
        -*) echo "check-circles: unknown option $1" >&2; usage >&2; exit 2 ;;
        *) folders+=("${1%/}"); shift ;;
    esac
done
[ ${#folders[@]} -gt 0 ] || folders=(agent controller)
command -v perl >/dev/null || { echo "check-circles: perl is required" >&2; exit 2; }
if [ -n "$allow" ]; then
    [ -f "$allow" ] || { echo "check-circles: no allow-list $allow" >&2; exit 2; }
    case $allow in /*) ;; *) allow="$PWD/$allow" ;; esac
fi
cd "$dir" || exit 2
[ -n "$allow" ] || [ ! -f scripts/check-circles.allow ] || allow=scripts/check-circles.allow
[ "$noallow" = 0 ] || allow=

exec perl - "$allow" "$edges" "${folders[@]}" <<'PERL'
use strict;
use warnings;

my ($allow, $show_edges, @folders) = @ARGV;

# The text of a file with comments, string and character literals blanked (lines kept).
sub slurp {
	my ($path) = @_;
	local $/;
	open(my $fh, '<', $path) or die "check-circles: $path: $!\n";
	my $t = <$fh>;
	close($fh);
	$t =~ s{"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'|/\*.*?\*/|//[^\n]*}
	       {my $m = $&; $m =~ s/[^\n]/ /g; $m}gse;
	return $t;
}

# Non-static functions and globals a .c file defines.
sub definitions {
	my ($t) = @_;
	my @names;
	my @lines = split(/\n/, $t, -1);
	for my $i (0 .. $#lines) {
		my $l = $lines[$i];
		if ($l =~ /^([A-Za-z_]\w*)\(/) {
			my $name = $1;
			# the parameter list, then `{` at column 0 (a definition, not a prototype)
			my $rest = join("\n", @lines[$i .. ($i + 30 > $#lines ? $#lines : $i + 30)]);
			my ($depth, $j) = (0, index($rest, '('));
			for (; $j < length($rest); $j++) {
				my $c = substr($rest, $j, 1);
				$depth++ if $c eq '(';
				last if $c eq ')' && --$depth == 0;
			}
			next unless substr($rest, $j + 1) =~ /^\s*\{/;
			my $type = $i > 0 ? $lines[$i - 1] : '';
			next if $type =~ /^\s*$/ || $type =~ /\bstatic\b/ || $type =~ /^#/;
			push(@names, $name);
		} elsif ($l =~ /^(?!static\b|extern\b|typedef\b|\#)(?:(?:const|volatile)\s+)*
				 (?:(?:struct|union|enum)\s+\w+|(?!(?:struct|union|enum)\b)\w+)
				 [\s*]+(?:const\s+)?([A-Za-z_]\w*)\s*(?:\[[^\]]*\])?\s*(?:=|;)/x) {
			push(@names, $1);
		}
	}
	return @names;
}

# The text with the bodies of struct and union definitions blanked: member names are not uses.
sub blank_members {
	my ($t) = @_;
	while ($t =~ /\b(?:struct|union)\s+(?:\w+\s*)?\{/g) {
		my ($start, $depth, $i) = (pos($t), 1, pos($t));
		for (; $i < length($t) && $depth; $i++) {
			my $c = substr($t, $i, 1);
			$depth++ if $c eq '{';
			$depth-- if $c eq '}';
		}
		my $body = substr($t, $start, $i - 1 - $start);
		$body =~ s/[^\n]/ /g;
		substr($t, $start, $i - 1 - $start) = $body;
		pos($t) = $i;
	}
	return $t;
}

my %allowed;
my $fail = 0;
my @allow_order;
if ($allow ne '') {
	open(my $fh, '<', $allow) or die "check-circles: $allow: $!\n";
	while (my $l = <$fh>) {
		$l =~ s/#.*//;
		my @f = grep { $_ ne '' && $_ ne '->' } split(/\s+/, $l);
		next unless @f;
		pop(@f) if @f > 1 && $f[0] eq $f[-1];
		my $key = canon(@f);
		$allowed{$key} = 0;
		push(@allow_order, $key);
	}
	close($fh);
}

# a cycle as one string, rotated to start at its smallest file
sub canon {
	my @c = @_;
	my $min = 0;
	for my $i (1 .. $#c) {
		$min = $i if $c[$i] lt $c[$min];
	}
	my @r = (@c[$min .. $#c], @c[0 .. $min - 1]);
	return join(' -> ', @r, $r[0]);
}

my $total = 0;
for my $folder (@folders) {
	$folder =~ s{/+$}{};
	unless (-d $folder) {
		print STDERR "check-circles: no folder $folder\n";
		exit 2;
	}
	my @cs = sort glob("$folder/*.c");
	my @hs = sort glob("$folder/*.h");
	my %node_of;    # file -> node (its .c)
	$node_of{$_} = $_ for @cs;
	for my $h (@hs) {
		(my $c = $h) =~ s/\.h$/.c/;
		$node_of{$h} = $c if $node_of{$c};
	}
	my (%def, %text);
	for my $f (@cs, @hs) {
		$text{$f} = slurp($f);
	}
	for my $c (@cs) {
		for my $name (definitions($text{$c})) {
			if (defined $def{$name} && $def{$name} ne $c) {
				print "check-circles: note: $name defined in $def{$name} and $c\n";
				next;
			}
			$def{$name} = $c;
		}
	}
	my %edge;       # "A\tB" -> example symbol
	for my $f (@cs, @hs) {
		my $from = $node_of{$f} or next;    # a shared header: only its users count
		my $t = $text{$f};
		# includes of module headers (read from the raw line: the path is a string)
		open(my $fh, '<', $f) or die "check-circles: $f: $!\n";
		while (my $l = <$fh>) {
			next unless $l =~ /^\s*#\s*include\s*"([^"]+)"/;
			my $inc = $1;
			my $path = $inc =~ m{/} ? $inc : "$folder/$inc";
			my $to = $node_of{$path};
			next unless $to && $to ne $from;
			$edge{"$from\t$to"} //= "#include \"$inc\"";
		}
		close($fh);
		$t =~ s/^\s*#\s*include[^\n]*//mg;
		$t = blank_members($t);
		# uses: words that name another file's definition, member names excluded
		while ($t =~ /(->|\.)?\s*\b([A-Za-z_]\w*)\b/g) {
			next if defined $1;
			my $to = $def{$2};
			next unless $to && $to ne $from;
			$edge{"$from\t$to"} //= $2;
		}
	}
	my %adj;
	for my $e (sort keys %edge) {
		my ($a, $b) = split(/\t/, $e);
		push(@{ $adj{$a} }, $b);
		print "edge: $a -> $b ($edge{$e})\n" if $show_edges;
	}

	# every elementary circuit: from each start file, paths through later files back to it
	my %idx;
	@idx{@cs} = (0 .. $#cs);
	my @cycles;
	my $limit = 100000;
	for my $s (@cs) {
		my @path = ($s);
		my %on = ($s => 1);
		my $walk;
		$walk = sub {
			my ($n) = @_;
			for my $m (@{ $adj{$n} || [] }) {
				if ($m eq $s) {
					push(@cycles, [@path]);
					die "check-circles: more than $limit cycles in $folder/\n" if @cycles > $limit;
				} elsif ($idx{$m} > $idx{$s} && !$on{$m}) {
					push(@path, $m);
					$on{$m} = 1;
					$walk->($m);
					delete $on{$m};
					pop(@path);
				}
			}
		};
		$walk->($s);
		undef $walk;
	}
	for my $c (sort { @$a <=> @$b || "@$a" cmp "@$b" } @cycles) {
		my $key = canon(@$c);
		my $listed = exists $allowed{$key};
		$allowed{$key}++ if $listed;
		$fail = 1 unless $listed;
		$total++;
		print(($listed ? "warning: allowed cycle" : "cycle"), ": $key\n");
		my @n = (@$c, $c->[0]);
		for my $i (0 .. $#n - 1) {
			print "    $n[$i] -> $n[$i + 1]: $edge{\"$n[$i]\t$n[$i + 1]\"}\n";
		}
	}
}
my %checked = map { $_ => 1 } @folders;
for my $key (@allow_order) {
	my ($folder) = $key =~ m{^(\S+)/[^/\s]+};
	next unless $checked{$folder // ''};
	print "note: allow-list cycle no longer present (remove it): $key\n" unless $allowed{$key};
}
if ($fail) {
	print "check-circles: cycles outside the allow-list: break them (a lower file that needs a higher one gets a callback)\n";
} else {
	print "check-circles: ok (" . join(' ', map { "$_/" } @folders) .
	      ($total ? "; $total allowed cycle(s) remain" : "") . ")\n";
}
exit $fail;
PERL
