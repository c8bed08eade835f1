#!/bin/bash
# scripts/lint-charts.sh - check the Helm chart charts/vm-dhcp. Without helm: every non-template
# YAML file parses, Chart.yaml's fields, chart crds/ == crds/, every .Values.X.Y a template
# uses exists in values.yaml, every values.yaml key is used and declared in values.schema.json,
# the RBAC rules are exactly the API calls the code makes (both ways: no missing rule, no
# unused verb; read from the controller's and the agent's C sources, and for the post-delete
# hook from controller/uninstall.c, the code of `vm-dhcp-controller --uninstall`), the
# Deployment and the hook's Job pass only flags the controller knows (from
# `vm-dhcp-controller --help`), with a value where one is needed (one of the listed choices when
# the chart fixes it), and every required one.
# With helm (scripts/install-deps installs it): `helm lint` and `helm template` with the
# default values and with ci/all-knobs-values.yaml (every knob), the rendered controller args
# carry each knob (the JSON flags equal to the values) and are accepted by the controller,
# names and label values fit 63 characters with the longest release name (53) and a 60-character
# fullnameOverride, the schema rejects typo'd keys and bad enums, kubeVersion admits 1.20, the
# PodDisruptionBudget and spreading, the RBAC check again on the rendered objects (with the
# agents' Lease rule: a Role of the release namespace without resourceNames, the Lease names
# being per pool), the agents' replicas and election durations (passed through, decimals
# given with --set too, refused out of order retryPeriod < renewDeadline < leaseDuration), and the
# uninstall hook: a post-delete Job running `--uninstall --namespace <release namespace>`
# (accepted by the controller), hardened like the controller, its ServiceAccount and RBAC hooks
# too and created before it, all deleted by policy; none of it with cleanupOnUninstall=false.
# The Go project's values (harvester/vm-dhcp-controller chart/values.yaml): ci/upstream-values.yaml
# (its file, unchanged) lints and renders, and the Deployment, Service, ServiceAccounts and the
# Lease's Role in kube-system carry its values; ci/upstream-knobs-values.yaml sets each of its
# keys away from the default (and moves the Lease) and every one lands where values.yaml says;
# its aliases win over our keys only when set; scripts/chart-harvester.sh packages the chart
# under that project's chart name with a repository index (Harvester's Addon).
# Monitoring (monitoring.*): the PodMonitor selects the label and scrapes the port name the
# controller gives the agent pods (controller/placement.[ch]), the ServiceMonitor the metrics
# Service's labels and port, both set the job names files/rules.yaml uses; rendered: none by
# default, all four with every knob (no monitoring.coreos.com API needed: an explicit enable
# renders), the PrometheusRule's spec is files/rules.yaml and the dashboard ConfigMap's JSON is
# files/dashboard.json, with the knobs' labels, interval and namespace; a ServiceMonitor without
# the metrics Service is refused. (tests/monitoring/test-monitoring.sh checks the rules with
# promtool and the dashboard's queries.)
# Admission (admission.*, templates/webhook.yaml): the webhook Service (443 -> the controller's
# port "webhook"), the empty Opaque Secret, the Mutating/ValidatingWebhookConfiguration (no
# caBundle, our kinds only, paths, timeout, failure policies, the VM webhook's matchCondition
# from 1.28), the --webhook-* flags naming them, RBAC on that Secret and those configurations
# by name; with ci/admission-off-values.yaml none of it and --webhook-listen off. While the
# controller's --help has no --webhook-listen, those flags are listed as not checked instead of
# failing. Calls the chart deliberately does not grant are listed, with why, in rbac_not_granted.
# Size: about 1300 lines, one file on purpose: every check reads the same rendered chart and the
# same lists taken from the C sources (API calls, flags); one script keeps them in one place.
# Prints what was and was not checked. Exit 0 when every check passed, 1 otherwise.
# Needs jq and perl; builds build/e2e/yaml2json and build/vm-dhcp-controller (make).
# ok/bad always return 0, so "test && ok || bad" is an if/else; word lists are identifiers.
# jq filters are single-quoted on purpose ($name is a jq variable).
# shellcheck disable=SC2015,SC2013,SC2016
set -u
cd "$(dirname "$0")/.." || exit 1
CHART=${CHART:-charts/vm-dhcp}
BUILD=${BUILD:-build}
Y2J=$BUILD/e2e/yaml2json
CTL=$BUILD/vm-dhcp-controller
fails=0
checks=0
notes=()

ok() { checks=$((checks + 1)); echo "  ok    $*"; }
bad() { checks=$((checks + 1)); fails=$((fails + 1)); echo "  FAIL  $*"; }
not_checked() { notes+=("$*"); }

command -v jq >/dev/null || { echo "lint-charts: jq is required (scripts/install-deps)" >&2; exit 1; }
command -v perl >/dev/null || { echo "lint-charts: perl is required" >&2; exit 1; }
if ! make -s --no-print-directory "$Y2J" "$CTL" >/dev/null; then
    echo "lint-charts: cannot build $Y2J and $CTL" >&2
    exit 1
fi
tmp=$(mktemp -d /tmp/lint-charts.XXXXXX) || exit 1
trap 'rm -rf "$tmp"' EXIT

# A template with its {{ }} actions neutralised, so its YAML shape can be parsed: a plain
# {{ .Values.x.y }} becomes the scalar values.yaml gives it, {{ include "vm-dhcp.xName" . }}
# becomes x-x (x-controller, x-agent: the suffix tells the objects apart; likewise
# {{ include "vm-dhcp.suffixed" (dict … "suffix" "lease-controller") }}), lines that hold
# only an action (include | nindent, with, if, end) go, other inline actions become "tmpl".
detemplate() {
    sed -E -f "$tmp/values.sed" -e '/^[[:space:]]*\{\{.*\}\}[[:space:]]*$/d' \
        -e 's/\{\{-? *include "vm-dhcp\.([a-z]+)Name" \. *-?\}\}/x-\1/g' \
        -e 's/\{\{-? *include "vm-dhcp\.suffixed" \(dict "ctx" \. "suffix" "([a-z-]+)"\) *-?\}\}/x-\1/g' \
        -e 's/\{\{[^}]*\}\}/tmpl/g' "$1"
}

echo "== YAML files parse (yaml2json)"
for f in "$CHART"/Chart.yaml "$CHART"/values.yaml "$CHART"/ci/*.yaml "$CHART"/crds/*.yaml; do
    [ -e "$f" ] || continue
    if "$Y2J" "$f" >"$tmp/out.json" 2>"$tmp/err"; then
        ok "$f"
    else
        bad "$f: $(cat "$tmp/err")"
    fi
done
SCHEMA=$CHART/values.schema.json
if [ -e "$SCHEMA" ] && jq -e 'type == "object"' "$SCHEMA" >/dev/null 2>"$tmp/err"; then
    ok "$SCHEMA parses (JSON)"
else
    bad "$SCHEMA missing or not JSON: $(cat "$tmp/err" 2>/dev/null)"
    echo '{}' >"$tmp/schema.json" && SCHEMA=$tmp/schema.json
fi

echo "== chart crds/ holds the files of crds/"
for f in crds/*.yaml; do
    c=$CHART/crds/$(basename "$f")
    if [ ! -e "$c" ]; then
        bad "$c missing (helm installs CRDs from the chart's crds/)"
    elif cmp -s "$f" "$c"; then
        ok "$c == $f$( [ -L "$c" ] && echo " (symlink to $(readlink "$c"))")"
    else
        bad "$c differs from $f"
    fi
done
for c in "$CHART"/crds/*; do
    [ -e "crds/$(basename "$c")" ] || bad "$c has no counterpart in crds/"
done
for c in "$CHART"/crds/*.yaml; do
    k=$("$Y2J" "$c" 2>/dev/null | jq -r '.kind' | sort -u | tr '\n' ' ')
    [ "$k" = "CustomResourceDefinition " ] && ok "$c is a CustomResourceDefinition" ||
        bad "$c: kind '$k', want CustomResourceDefinition only"
done

echo "== Chart.yaml"
chart=$("$Y2J" "$CHART/Chart.yaml" 2>/dev/null | head -n 1)
[ -n "$chart" ] || chart='{}'
v=$(jq -r '.apiVersion // ""' <<<"$chart")
[ "$v" = v2 ] && ok "apiVersion v2" || bad "apiVersion '$v', want v2"
v=$(jq -r '.name // ""' <<<"$chart")
[ "$v" = "$(basename "$CHART")" ] && ok "name $v (the directory's)" ||
    bad "name '$v', want $(basename "$CHART")"
v=$(jq -r '.version // "" | tostring' <<<"$chart")
[[ $v =~ ^[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.-]+)?$ ]] && ok "version $v (SemVer 2)" ||
    bad "version '$v' is not SemVer 2"
v=$(jq -r '.appVersion // "" | tostring' <<<"$chart")
[ -n "$v" ] && ok "appVersion $v" || bad "appVersion missing"
if [ -e VERSION ]; then
    [ "$v" = "$(cat VERSION)" ] && ok "appVersion == VERSION (the images' tag)" ||
        bad "appVersion '$v' differs from VERSION '$(cat VERSION)' (the default image tags)"
fi
v=$(jq -r '.type // "application"' <<<"$chart")
[[ $v =~ ^(application|library)$ ]] && ok "type $v" || bad "type '$v'"
v=$(jq -r '.kubeVersion // ""' <<<"$chart")
[ -n "$v" ] && ok "kubeVersion $v (what it admits: under helm below)" ||
    bad "kubeVersion missing (the CRDs and templates need a minimum Kubernetes)"

echo "== .Values keys used by the templates exist in values.yaml"
values=$("$Y2J" "$CHART/values.yaml" 2>/dev/null | head -n 1)
[ -n "$values" ] || values='{}'
# sed script: {{ .Values.a.b }} -> the scalar (identifier-like values only; others stay)
jq -r 'paths(scalars) as $p | [($p | map(tostring) | join(".")), (getpath($p) | tostring)] |
    select(.[1] | test("^[A-Za-z0-9_.:/-]+$")) |
    "s|\\{\\{-? *\\.Values\\.\(.[0] | gsub("\\."; "\\.")) *-?\\}\\}|\(.[1])|g"' \
    <<<"$values" >"$tmp/values.sed"
keys=$(grep -ohE '\.Values(\.[A-Za-z_][A-Za-z0-9_]*)+' "$CHART"/templates/* | sort -u)
[ -n "$keys" ] || bad "no .Values reference found in $CHART/templates (grep broken?)"
# one jq for every key (a jq per key took seconds on a busy machine)
while IFS=$'\t' read -r res k; do
    if [ "$res" = ok ]; then ok "$k"; else bad "$k is used by a template but not set in values.yaml"; fi
done < <(jq -r --arg keys "$keys" '
    def has_path($p): ($p | length) == 0 or
        (type == "object" and has($p[0]) and (.[$p[0]] | has_path($p[1:])));
    . as $v | $keys | split("\n")[] | select(length > 0) as $k |
    [(if ($v | has_path($k | ltrimstr(".Values.") | split("."))) then "ok" else "bad" end), $k] |
    @tsv' <<<"$values")

# every values.yaml leaf is used by a template (itself or an object above it, as with toYaml)
used=$(grep -ohE '\.Values(\.[A-Za-z_][A-Za-z0-9_]*)+' "$CHART"/templates/* | sed 's/^\.Values\.//' | sort -u)
unused=0
declare -A used_set=()
while IFS= read -r u; do [ -n "$u" ] && used_set[$u]=1; done <<<"$used"
for k in $(jq -r 'paths(type != "object" or length == 0) | map(tostring) | join(".")' <<<"$values" |
    sed -E 's/\.[0-9]+(\..*)?$//' | sort -u); do
    p=$k
    while [ -n "$p" ] && [ -z "${used_set[$p]:-}" ]; do
        [[ $p == *.* ]] && p=${p%.*} || p=
    done
    [ -n "$p" ] || { bad "values.yaml key $k is used by no template"; unused=1; }
done
[ $unused = 0 ] && ok "every values.yaml key is used by a template"
# every values.yaml key is declared by the schema (properties, additionalProperties, $ref)
undeclared=$(jq -rn --slurpfile s "$SCHEMA" --argjson v "$values" '
    $s[0] as $root |
    def deref: if type == "object" and has("$ref") then
        .["$ref"] as $r | $root | getpath($r | ltrimstr("#/") | split("/")) | deref else . end;
    def walk($node; $val; $path):
        ($node | deref) as $n |
        if ($val | type) == "object" then
            $val | to_entries[] | .key as $k |
            (if ($n.properties // {}) | has($k) then $n.properties[$k]
             elif ($n.additionalProperties | type) == "object" then $n.additionalProperties
             elif $n.additionalProperties == false then null
             else {} end) as $sub |
            if $sub == null then "\($path)\($k)" else walk($sub; .value; "\($path)\($k).") end
        elif ($val | type) == "array" then
            $val[] as $item | walk($n.items // {}; $item; $path)
        else empty end;
    walk($root; $v; "")' 2>&1 | sort -u)
[ -z "$undeclared" ] && ok "every values.yaml key is declared in values.schema.json" ||
    bad "values.yaml keys the schema does not declare: $(tr '\n' ' ' <<<"$undeclared")"
for k in $(jq -r 'paths(type == "object" and (.properties? != null) and (.additionalProperties? != false)) | map(tostring) | join(".")' "$SCHEMA" | grep -v '^definitions\.[a-zA-Z]*$' | grep -v '^$'); do
    bad "schema object $k allows unknown keys (additionalProperties false catches typos)"
done
jq -e '.additionalProperties == false' "$SCHEMA" >/dev/null &&
    ok "schema: unknown top-level keys are refused" || bad "schema: top level allows unknown keys"

# The API calls a program makes, from its C sources: "group|resource|verb|file:line" lines.
rbac_from_code() {
    perl - "$@" <<'PERL'
# The Kubernetes API calls a program makes, read from its C sources: one line per
# "group|resource|verb|where" (group empty for the core group). Usage:
#   perl - PROGRAM FILE... (the program's own sources; kube/ files are added when reached)
# Resources are the `struct kube_resource NAME = { group, version, resource, kind, … }`
# definitions (string literals or #define'd names) of lib/ crds/ kube/ controller/ agent/.
# A use of &NAME is classified by the call it is an argument of:
#   kube_get get, kube_list list, kube_watch_start watch, kube_create create,
#   kube_update update, kube_update_status update of NAME/status, kube_patch patch (of
#   NAME/status when its subresource argument is "status"), kube_delete delete,
#   kube_update_retry get + update (of NAME/status when its status argument is true),
#   kube_informer_new list + watch;
# inside an initializer ({ &NAME, … } or .res = &NAME) of a file that calls
# kube_informer_new, or .res = &NAME anywhere in a program that fills an informer's
# options from a table (.res = k->res, the controller's table of kinds): list + watch.
# &NAME passed to a function of the program's own (a helper) is followed into it: the
# parameter used as an argument of a known call, or stored in a field (X->F = param) that a
# known call of the helper's file takes as an argument (X->F).
# Anything else prints "?|…" (the caller fails).
# A kube/*.c file that names a resource itself (leader.c: leases, event.c: events) is
# analysed when the program calls a function it defines. An ownerReference with
# blockOwnerDeletion set needs update on <owner resource>/finalizers.
use strict;
use warnings;

my ($prog, @files) = @ARGV;

sub slurp {
	my ($path) = @_;
	local $/;
	open(my $fh, '<', $path) or die "$path: $!\n";
	my $t = <$fh>;
	close($fh);
	# comments out, string literals kept (they may hold "/*")
	$t =~ s{("(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*')|/\*.*?\*/|//[^\n]*}
	       {defined $1 ? $1 : ($& =~ s/[^\n]/ /gr)}gse;
	return $t;
}

# the same text with the contents of string literals blanked (for bracket matching)
sub mask {
	my ($t) = @_;
	$t =~ s{"((?:\\.|[^"\\\n])*)"}{'"' . ('x' x length($1)) . '"'}ge;
	return $t;
}

my @all = map { glob($_) } qw(lib/*.[ch] crds/*.[ch] kube/*.[ch] controller/*.[ch] agent/*.[ch]);
my (%text, %macro, %res);
for my $f (@all) {
	$text{$f} = slurp($f);
	while ($text{$f} =~ /^[ \t]*#[ \t]*define[ \t]+(\w+)[ \t]+"([^"]*)"/mg) {
		$macro{$1} = $2;
	}
}
sub value {
	my ($tok) = @_;
	$tok =~ s/^\s+|\s+$//g;
	return $1 if $tok =~ /^"([^"]*)"$/;
	return $macro{$tok} if defined $macro{$tok};
	return undef;
}
for my $f (@all) {
	while ($text{$f} =~ /struct\s+kube_resource\s+(\w+)\s*=\s*\{(.*?)\}\s*;/sg) {
		my ($name, $body) = ($1, $2);
		my %r;
		if ($body =~ /\.\w+\s*=/) {
			$r{$1} = value($2) while $body =~ /\.(\w+)\s*=\s*([^,]+)/g;
		} else {
			my @p = split(/,/, $body);
			@r{qw(group version resource kind)} = map { value($_) } @p[0 .. 3];
		}
		$res{$name} = { group => $r{group}, resource => $r{resource}, kind => $r{kind} };
	}
}

# the program's files, plus the kube/ files it reaches
my %set = map { $_ => 1 } @files;
for (my $changed = 1; $changed;) {
	$changed = 0;
	my $prog_text = join("\n", map { $text{$_} // slurp($_) } sort keys %set);
	for my $f (grep { m{^kube/.*\.c$} && !$set{$_} } @all) {
		next unless $text{$f} =~ /&kube_res_\w+/;
		my @defs = $text{$f} =~ /^(kube_\w+)\(/mg;
		if (grep { $prog_text =~ /\b\Q$_\E\s*\(/ } @defs) {
			$set{$f} = 1;
			$changed = 1;
		}
	}
}

my %verbs = (
	kube_get => ['get'], kube_list => ['list'],
	kube_watch_start => ['watch'], kube_create => ['create'], kube_update => ['update'],
	kube_delete => ['delete'], kube_informer_new => ['list', 'watch'],
);

sub out {
	my ($r, $sub, $verb, $where) = @_;
	my $resource = $r->{resource} . ($sub ? "/$sub" : '');
	print join('|', $r->{group} // '?', $resource, $verb, $where), "\n";
}

# top-level arguments of the call whose '(' is at $open
sub args {
	my ($orig, $masked, $open) = @_;
	my ($depth, $start, @a) = (0, $open + 1);
	for (my $i = $open + 1; $i < length($masked); $i++) {
		my $c = substr($masked, $i, 1);
		if ($c =~ /[({\[]/) {
			$depth++;
		} elsif ($c =~ /[)}\]]/) {
			if ($depth == 0) {
				push(@a, substr($orig, $start, $i - $start));
				last;
			}
			$depth--;
		} elsif ($c eq ',' && $depth == 0) {
			push(@a, substr($orig, $start, $i - $start));
			$start = $i + 1;
		}
	}
	s/^\s+|\s+$//g for @a;
	return @a;
}

# the '(' or '{' (index, char) that encloses the expression at $pos, or the ';' before it
sub enclosing {
	my ($m, $pos) = @_;
	my ($paren, $brace) = (0, 0);
	my $i;
	for ($i = $pos - 1; $i >= 0; $i--) {
		my $c = substr($m, $i, 1);
		if ($c eq ')') { $paren++; }
		elsif ($c eq '(') { last if $paren == 0; $paren--; }
		elsif ($c eq '}') { $brace++; }
		elsif ($c eq '{') { last if $brace == 0; $brace--; }
		elsif ($c eq ';' && $paren == 0 && $brace == 0) { last; }
	}
	return ($i, $i >= 0 ? substr($m, $i, 1) : ';');
}

# a call of the kube/ API with resource $r among its arguments @$a: prints its verbs, 1 if known
sub classify {
	my ($r, $call, $a, $where) = @_;
	my @a = @$a;
	if ($verbs{$call}) {
		out($r, '', $_, $where) for @{$verbs{$call}};
	} elsif ($call eq 'kube_update_status') {
		out($r, 'status', 'update', $where);
	} elsif ($call eq 'kube_patch' && @a >= 7 && $a[6] =~ /^(NULL|"status")$/) {
		out($r, $a[6] eq 'NULL' ? '' : 'status', 'patch', $where);
	} elsif ($call eq 'kube_update_retry' && @a >= 5 && $a[4] =~ /^(true|false)$/) {
		out($r, '', 'get', $where);
		out($r, $a[4] eq 'true' ? 'status' : '', 'update', $where);
	} else {
		return 0;
	}
	return 1;
}

# &NAME passed as argument $k of $fn, a function the program defines (a helper such as
# webcert-cabundle.c's add_cfgs): follows parameter $k through $fn's body, where it is
#   an argument of a known call (or of another such helper), or
#   stored in a field (X->F = param, X.F = param): then every known call of $fn's file with
#   an argument X->F / X.F (any X) is a use of it.
# Prints the verbs found, returns how many uses were found (0: the caller reports "?").
sub helper {
	my ($r, $fn, $k, $where, $depth) = @_;
	return 0 if $depth > 4;
	for my $f (sort keys %set) {
		my $t = $text{$f} // slurp($f);
		my $m = mask($t);
		next unless $m =~ /^\Q$fn\E\s*\(/mg;
		my $open = pos($m) - 1;
		my @params = args($t, $m, $open);
		next unless $k < @params;
		my ($p) = $params[$k] =~ /(\w+)\s*(?:\[\s*\])?$/ or next;
		# the body: from the '{' after the parameter list to its match
		my $b = index($m, '{', $open);
		next if $b < 0;
		my ($depth_b, $e) = (0, $b);
		for (; $e < length($m); $e++) {
			my $c = substr($m, $e, 1);
			$depth_b++ if $c eq '{';
			last if $c eq '}' && --$depth_b == 0;
		}
		my $body = substr($t, $b, $e - $b + 1);
		my $bm = substr($m, $b, $e - $b + 1);
		my $n = 0;
		my $via = "$where via $fn";
		while ($bm =~ /\b\Q$p\E\b/g) {
			my $pos = $-[0];
			my ($i, $c) = enclosing($bm, $pos);
			next if $c ne '(';
			my ($call) = substr($bm, 0, $i) =~ /(\w+)\s*$/;
			next unless defined $call;
			my @a = args($body, $bm, $i);
			my ($kk) = grep { $a[$_] eq $p } 0 .. $#a;
			next unless defined $kk;
			if (classify($r, $call, \@a, $via)) { $n++; }
			elsif (my $h = helper($r, $call, $kk, $via, $depth + 1)) { $n += $h; }
		}
		while ($body =~ /\b\w+\s*(?:->|\.)\s*(\w+)\s*=\s*\Q$p\E\s*;/g) {
			my $field = $1;
			pos($m) = 0;
			while ($m =~ /\b\w+\s*(?:->|\.)\s*\Q$field\E\b(?!\s*(?:=[^=]|->|\.|\())/g) {
				my $pos = $-[0];
				my ($i, $c) = enclosing($m, $pos);
				next if $c ne '(';
				my ($call) = substr($m, 0, $i) =~ /(\w+)\s*$/;
				next unless defined $call;
				my @a = args($t, $m, $i);
				next unless grep { /^\w+\s*(?:->|\.)\s*\Q$field\E$/ } @a;
				my $line = 1 + (substr($t, 0, $pos) =~ tr/\n//);
				$n++ if classify($r, $call, \@a, "$f:$line ($via, ->$field)");
			}
		}
		return $n;
	}
	return 0;
}

# a table of informed kinds: some file copies .res from a table entry into informer options
my $kinds_table = grep { ($text{$_} // slurp($_)) =~ /\.res\s*=\s*\w+\s*(->|\.)\s*res\b/ }
    keys %set;
for my $f (sort keys %set) {
	my $t = $text{$f} // slurp($f);
	my $m = mask($t);
	my $informer = $t =~ /\bkube_informer_new\s*\(/;
	while ($t =~ /&\s*(\w+)/g) {
		my ($id, $pos) = ($1, $-[0]);
		my $r = $res{$id} or next;
		my $line = 1 + (substr($t, 0, $pos) =~ tr/\n//);
		my $where = "$f:$line";
		my ($i, $c) = enclosing($m, $pos);
		if ($c ne '(') {
			# an initializer or an assignment (.res = &x): an informer's resource
			my $dot_res = substr($m, $i + 1, $pos - $i - 1) =~ /\.res\s*=\s*$/;
			if (($informer && ($c eq '{' || $dot_res)) || ($kinds_table && $dot_res)) {
				out($r, '', $_, $where) for qw(list watch);
			} else {
				print "?|$id|not an argument of a known call|$where\n";
			}
			next;
		}
		my ($call) = substr($m, 0, $i) =~ /(\w+)\s*$/;
		$call //= '';
		my @a = args($t, $m, $i);
		next if classify($r, $call, \@a, $where);
		my ($k) = grep { $a[$_] =~ /^&\s*\Q$id\E$/ } 0 .. $#a;
		next if defined($k) && helper($r, $call, $k, $where, 0);
		print "?|$id|call $call not classified|$where\n";
	}
	# ownerReferences with blockOwnerDeletion: update on the owner's finalizers
	while ($t =~ /"blockOwnerDeletion"\s*,\s*(1|true|json_true\(\))/g) {
		my $pos = $-[0];
		my $line = 1 + (substr($t, 0, $pos) =~ tr/\n//);
		my $before = substr($t, 0, $pos);
		my @api = $before =~ /"apiVersion"\s*,\s*(\w+|"[^"]*")/g;
		my @kind = $before =~ /"kind"\s*,\s*(\w+|"[^"]*")/g;
		my ($api, $kind) = (value($api[-1] // ''), value($kind[-1] // ''));
		my ($group) = ($api // '') =~ m{^(?:(.*)/)?[^/]+$};
		my @owner = grep { ($_->{kind} // '') eq ($kind // '') &&
		    ($_->{group} // '') eq ($group // '') } values %res;
		if (@owner && defined $api) {
			out($owner[0], 'finalizers', 'update', "$f:$line (blockOwnerDeletion)");
		} else {
			print "?|ownerReference|blockOwnerDeletion owner not resolved|$f:$line\n";
		}
	}
}
PERL
}

# rbac_check WHO RULES_JSON EXPECTED_FILE: the rules (a JSON array) grant exactly the
# (group, resource, verb) triples of EXPECTED_FILE, without wildcards.
rbac_check() {
    local who=$1 rules=$2 expected=$3 granted missing unused
    if jq -e '[.[] | (.apiGroups // []) + (.resources // []) + (.verbs // []) | .[]] | index("*")' \
        <<<"$rules" >/dev/null; then
        bad "$who: a rule uses the wildcard \"*\""
    fi
    granted=$(jq -r '.[] | (.apiGroups // [])[] as $g | (.resources // [])[] as $r |
        (.verbs // [])[] as $v | "\($g)|\($r)|\($v)"' <<<"$rules" | sort -u)
    cut -d'|' -f1-3 "$expected" | sort -u >"$tmp/want"
    missing=$(comm -23 "$tmp/want" <(printf '%s\n' "$granted" | sed '/^$/d'))
    unused=$(comm -13 "$tmp/want" <(printf '%s\n' "$granted" | sed '/^$/d'))
    # group|resource|verb -> "verb on group/resource" (core for the empty group)
    say() { local gr=${1%|*}; [ "${gr%%|*}" ] || gr=core$gr; echo "${1##*|} on ${gr/|//}"; }
    for m in $missing; do
        bad "$who: no rule grants $(say "$m"), which the code calls ($(grep -F "$m|" "$expected" | cut -d'|' -f4 | head -n 2 | tr '\n' ' ' | sed 's/ $//'))"
    done
    for u in $unused; do
        bad "$who: grants $(say "$u"), which the code never calls (unused verb)"
    done
    if [ -z "$missing" ] && [ -z "$unused" ]; then
        ok "$who: rules == calls ($(awk -F'|' '{ r = ($1 == "" ? "core" : $1) "/" $2; v[r] = v[r] " " $3 }
            END { for (k in v) printf "%s:%s; ", k, v[k] }' "$tmp/want" | sed 's/; $//'))"
    fi
}

# rbac_objects LABEL JSON_LINES: RBAC checks over the Role/ClusterRole objects of a chart
# rendering (names end in -controller / -agent / -uninstall, the post-delete hook's).
rbac_objects() {
    local label=$1 docs=$2 rules cluster lease
    for who in controller agent uninstall; do
        rules=$(jq -cs --arg w "-$who" '[.[] | select(. != null) |
            select((.kind == "ClusterRole" or .kind == "Role") and (.metadata.name | endswith($w))) |
            .rules[]]' "$docs")
        rbac_check "$label $who" "$rules" "$tmp/calls-$who"
    done
    # what the controller does in its own namespace only stays out of its ClusterRole
    cluster=$(jq -rs '[.[] | select(. != null) | select(.kind == "ClusterRole") | .rules[] |
        select(((.apiGroups // []) | index("apps")) and ((.resources // []) | index("deployments"))
            or ((.apiGroups // []) | index("coordination.k8s.io")) and ((.resources // []) | index("leases")))] | length' "$docs")
    [ "$cluster" = 0 ] && ok "$label: deployments and leases are granted in the namespace only (Role)" ||
        bad "$label: a ClusterRole grants deployments or leases (the controller and the agents use them in their namespace only)"
    lease=$(sed -nE 's/^#define CTRL_LEASE_NAME "([^"]*)".*/\1/p' controller/ctrl.h)
    [ -n "$lease" ] || bad "no CTRL_LEASE_NAME in controller/ctrl.h"
    if jq -es --arg l "$lease" '[.[] | select(. != null) | select(.kind == "Role") | .rules[] |
        select((.resources // []) | index("leases")) | select(.resourceNames != null) |
        .resourceNames | index($l)] | all(. != null)' "$docs" >/dev/null; then
        ok "$label: leases resourceNames name the controller's Lease ($lease)"
    else
        bad "$label: a leases rule with resourceNames misses the Lease $lease (controller/ctrl.h)"
    fi
    # the controller's: only create cannot name its object, every other verb on leases is for
    # that one Lease. The agents' Lease names are per pool (the agent Deployment's name, pools
    # come and go after the install): their Role cannot name them.
    if jq -es '[.[] | select(. != null) | select(.kind == "Role" or .kind == "ClusterRole") |
        select(.metadata.name | endswith("-agent") | not) |
        .rules[] | select((.resources // []) | index("leases")) | select(.resourceNames == null) |
        .verbs[] | select(. != "create")] | length == 0' "$docs" >/dev/null; then
        ok "$label: controller: leases verbs but create are restricted to the Lease (resourceNames)"
    else
        bad "$label: a controller leases rule grants more than create without resourceNames"
    fi
    # the agents' Lease election (--agent-replicas from 2): get, create, update on leases in a
    # Role of the release namespace, bound to the agent ServiceAccount (the subject of the
    # agent ClusterRoleBinding)
    if jq -es '[.[] | select(. != null)] as $d |
        [$d[] | select(.kind == "ClusterRoleBinding" and (.metadata.name | endswith("-agent"))) |
            .subjects[] | select(.kind == "ServiceAccount") | .name] as $sa |
        [$d[] | select(.kind == "Role" and (.metadata.name | endswith("-agent"))) |
            select(any(.rules[]; (.apiGroups // []) == ["coordination.k8s.io"] and
                (.resources // []) == ["leases"] and ((.verbs // []) | sort) == ["create", "get", "update"]))] |
        length == 1 and ($sa | length) == 1 and (.[0].metadata.name as $n | .[0].metadata.namespace as $ns |
            any($d[]; .kind == "RoleBinding" and .metadata.namespace == $ns and
                .roleRef.kind == "Role" and .roleRef.name == $n and
                any(.subjects[]; .kind == "ServiceAccount" and .name == $sa[0])))' \
        "$docs" >/dev/null; then
        ok "$label: agent: get, create, update on leases in its namespace (Role bound to the agent ServiceAccount)"
    else
        bad "$label: agent: no Role *-agent granting get, create, update on coordination.k8s.io leases, bound by a RoleBinding"
    fi
}

echo "== RBAC: the chart's rules are exactly the API calls of the code"
# controller/uninstall.c is the --uninstall mode: the post-delete hook's RBAC, not the
# controller's (main.c only calls it)
ctl_srcs=()
for f in controller/*.c; do [ "$f" = controller/uninstall.c ] || ctl_srcs+=("$f"); done
rbac_from_code controller "${ctl_srcs[@]}" >"$tmp/calls-controller"
rbac_from_code agent agent/*.c >"$tmp/calls-agent"
rbac_from_code uninstall controller/uninstall.c >"$tmp/calls-uninstall"
# Calls the chart deliberately does not grant: PROGRAM|GROUP|RESOURCE|VERB|FILE|REASON. The
# code must handle the 403 (the line must still match a call, or the entry is stale).
rbac_not_granted='controller||secrets|create|controller/webcert.c|the chart creates the (empty) Secret and create cannot be limited to one name (resourceNames); webcert.c reports the 403 and waits for it'
while IFS='|' read -r who g r v f why; do
    [ -n "$who" ] || continue
    if grep -qE "^$g\|$r\|$v\|$f:" "$tmp/calls-$who"; then
        grep -vE "^$g\|$r\|$v\|$f:" "$tmp/calls-$who" >"$tmp/calls-$who.kept"
        mv "$tmp/calls-$who.kept" "$tmp/calls-$who"
        ok "$who: $v on ${g:-core}/$r ($f) is not granted on purpose: $why"
    else
        bad "$who: rbac_not_granted names $v on ${g:-core}/$r in $f, which the code no longer calls (stale entry)"
    fi
done <<<"$rbac_not_granted"
for who in controller agent uninstall; do
    if grep -q '^?' "$tmp/calls-$who"; then
        bad "$who: API calls this script cannot classify (teach rbac_from_code): $(grep '^?' "$tmp/calls-$who" | tr '\n' ' ')"
    elif [ -s "$tmp/calls-$who" ]; then
        ok "$who: $(wc -l <"$tmp/calls-$who") API call sites read from the sources"
    else
        bad "$who: no API call found in the sources (analysis broken?)"
    fi
done
for t in rbac uninstall; do
    detemplate "$CHART/templates/$t.yaml" >"$tmp/$t.yaml"
    if "$Y2J" "$tmp/$t.yaml" >"$tmp/$t.json" 2>"$tmp/err"; then
        ok "templates/$t.yaml parses (actions neutralised)"
    else
        bad "templates/$t.yaml does not parse: $(cat "$tmp/err")"
    fi
done
cat "$tmp/rbac.json" "$tmp/uninstall.json" >"$tmp/rbac-all.json" 2>/dev/null
rbac_objects "rbac.yaml + uninstall.yaml" "$tmp/rbac-all.json"

# check_args LABEL ARGS_JSON REQUIRED...: every flag in the args is one of `--help`, with a value
# when it takes one (one of the listed choices when the chart fixes it), and each required one
# is passed.
check_args() {
    local label=$1 args=$2 n i a flag line next alts req argv=()
    shift 2
    # the args once, into an array (a jq per arg took seconds on a busy machine)
    mapfile -t argv < <(jq -r '.[]' <<<"$args")
    n=${#argv[@]}
    for ((i = 0; i < n; i++)); do
        a=${argv[$i]}
        [[ $a == --* ]] || continue
        flag=${a%%=*}
        line=$(grep -E -- "^[[:space:]]*$flag( |$)" <<<"$help" | head -n 1)
        if [ -z "$line" ] && $admission_pending && grep -qxF -- "$flag" <<<"${admission_flags// /$'\n'}"; then
            not_checked "$label: $flag (admission) against --help: this vm-dhcp-controller has no admission flags yet"
            continue
        fi
        if [ -z "$line" ]; then
            bad "$label: $flag is not a flag of vm-dhcp-controller (--help)"
            continue
        fi
        # "--flag ARG  text" (one space, then the argument): the flag takes a value
        if [[ $line =~ ^[[:space:]]*--[a-z-]+\ [^\ ] ]] && [[ $a != *=* ]]; then
            next=${argv[$((i + 1))]:-}
            if [ -z "$next" ] || [[ $next == --* ]]; then
                bad "$label: $flag takes a value, none follows"
                continue
            fi
            # "--flag a|b|c": the value must be one of them (when the chart fixes it)
            alts=$(sed -E -n "s/^[[:space:]]*$flag ([A-Za-z]+(\|[A-Za-z]+)+).*/\1/p" <<<"$help")
            if [ -n "$alts" ] && [ "$next" != tmpl ] && ! grep -qxF -- "$next" <<<"${alts//|/$'\n'}"; then
                bad "$label: $flag $next: not one of $alts"
                continue
            fi
            ok "$label: $flag $next"
        else
            ok "$label: $flag"
        fi
    done
    for req in "$@"; do
        local found=false
        for a in "${argv[@]}"; do [ "$a" = "$req" ] && { found=true; break; }; done
        $found && ok "$label: required $req is passed" || bad "$label: required $req is not passed"
    done
}

echo "== controller Deployment and uninstall Job flags match vm-dhcp-controller --help"
help=$("$CTL" --help 2>&1)
# The admission flags the chart passes (templates/deployment.yaml) land in the controller apart
# from the chart: while its --help has no --webhook-listen they are noted as not checked, and
# left out of the args given to the controller below.
admission_flags="--webhook-listen --webhook-secret --webhook-service --webhook-cert-san --webhook-mutating --webhook-validating --webhook-cert-validity --service-cidr"
admission_pending=false
grep -qE -- '^[[:space:]]*--webhook-listen( |$)' <<<"$help" || admission_pending=true
# argv_of ARGS_JSON: the args one per line (without the admission flags and their values while
# the controller does not know them)
argv_of() {
    if $admission_pending; then
        jq -r --arg f "$admission_flags" '($f | split(" ")) as $p | . as $a | range(length) as $i |
            select(($p | index($a[$i])) == null and ($i == 0 or ($p | index($a[$i - 1])) == null)) | $a[$i]' <<<"$1"
    else
        jq -r '.[]' <<<"$1"
    fi
}
detemplate "$CHART/templates/deployment.yaml" >"$tmp/deploy.yaml"
if "$Y2J" "$tmp/deploy.yaml" >"$tmp/deploy.json" 2>"$tmp/err"; then
    ok "templates/deployment.yaml parses (actions neutralised)"
else
    bad "templates/deployment.yaml does not parse: $(cat "$tmp/err")"
fi
args=$(jq -c 'select(.kind == "Deployment") | .spec.template.spec.containers[] |
    select(.name == "controller") | .args // []' "$tmp/deploy.json" 2>/dev/null | head -n 1)
[ -n "$args" ] || { bad "no controller container with args in the Deployment"; args='[]'; }
# shellcheck disable=SC2046
check_args Deployment "$args" $(sed -n 's/^usage: [^ ]* \(.*\)\[options\].*/\1/p' <<<"$help" | grep -oE -- '--[a-z-]+')
args=$(jq -c 'select(.kind == "Job") | .spec.template.spec.containers[0].args // []' \
    "$tmp/uninstall.json" 2>/dev/null | head -n 1)
[ -n "$args" ] || { bad "no Job with args in templates/uninstall.yaml"; args='[]'; }
check_args "uninstall Job" "$args" --uninstall --namespace
for p in /healthz /readyz; do
    grep -q "path: $p" "$CHART/templates/deployment.yaml" && grep -qF "$p" <<<"$help" &&
        ok "probe $p is served (--listen)" || bad "probe $p: not in the Deployment or not served"
done

# hook_checks LABEL JSON_LINES NAMESPACE: the objects named *-uninstall are the post-delete
# hook: each a hook with both delete policies, the Job last (weight), run by the hook's own
# ServiceAccount bound to the hook's Role and ClusterRole, hardened like the controller, a
# small backoffLimit, a deadline, no ttlSecondsAfterFinished (alpha on 1.20), and its args
# `--uninstall --namespace NAMESPACE`.
hook_checks() {
    local label=$1 docs=$2 ns=$3 hooks kinds sa
    hooks=$(jq -cs '[.[] | select(. != null and (.metadata.name | endswith("-uninstall")))]' "$docs")
    kinds=$(jq -r '[.[].kind] | sort | join(" ")' <<<"$hooks")
    # a Role and RoleBinding in the release namespace, another pair in the leader Lease's
    [ "$kinds" = "ClusterRole ClusterRoleBinding Job Role Role RoleBinding RoleBinding ServiceAccount" ] &&
        ok "$label: hook objects: $kinds" || bad "$label: hook objects are '$kinds'"
    jq -e 'length > 0 and all(.[]; .metadata.annotations["helm.sh/hook"] == "post-delete" and
        ((.metadata.annotations["helm.sh/hook-delete-policy"] // "") | split(",") |
            index("before-hook-creation") != null and index("hook-succeeded") != null))' \
        <<<"$hooks" >/dev/null &&
        ok "$label: each is a post-delete hook, deleted before re-creation and once succeeded" ||
        bad "$label: a hook object lacks helm.sh/hook post-delete or the delete policies"
    jq -e '([.[] | select(.kind != "Job") | .metadata.annotations["helm.sh/hook-weight"] // "0" | tonumber] | max) <
        ([.[] | select(.kind == "Job") | .metadata.annotations["helm.sh/hook-weight"] // "0" | tonumber] | min)' \
        <<<"$hooks" >/dev/null 2>&1 &&
        ok "$label: the ServiceAccount and RBAC come before the Job (hook-weight)" ||
        bad "$label: a ServiceAccount or RBAC hook weighs as much as the Job or more"
    sa=$(jq -r '.[] | select(.kind == "Job") | .spec.template.spec.serviceAccountName // ""' <<<"$hooks")
    jq -e --arg sa "$sa" '
        def bound($k; $rk): any(.[]; .kind == $k and .roleRef.kind == $rk and
            (.roleRef.name | endswith("-uninstall")) and
            any(.subjects[]; .kind == "ServiceAccount" and .name == $sa));
        any(.[]; .kind == "ServiceAccount" and .metadata.name == $sa) and
        bound("RoleBinding"; "Role") and bound("ClusterRoleBinding"; "ClusterRole")' \
        <<<"$hooks" >/dev/null &&
        ok "$label: the Job runs as the hook's ServiceAccount $sa, bound to its Role and ClusterRole" ||
        bad "$label: the Job's ServiceAccount '$sa' is not the hook's, bound to its Role and ClusterRole"
    jq -e '.[] | select(.kind == "Job") | .apiVersion == "batch/v1" and
        (.spec.backoffLimit // 6) <= 3 and (.spec.activeDeadlineSeconds // 0) > 0 and
        (.spec.ttlSecondsAfterFinished == null) and
        (.spec.template.spec.restartPolicy == "Never" or .spec.template.spec.restartPolicy == "OnFailure")' \
        <<<"$hooks" >/dev/null &&
        ok "$label: Job batch/v1, backoffLimit <= 3, activeDeadlineSeconds, no ttlSecondsAfterFinished" ||
        bad "$label: Job apiVersion, backoffLimit, activeDeadlineSeconds, ttlSecondsAfterFinished or restartPolicy"
    jq -e '.[] | select(.kind == "Job") | .spec.template.spec as $p | $p.securityContext.runAsNonRoot == true and
        ($p.securityContext.runAsUser | tostring) == "65532" and $p.securityContext.seccompProfile.type == "RuntimeDefault" and
        all($p.containers[]; .securityContext.allowPrivilegeEscalation == false and
            .securityContext.readOnlyRootFilesystem == true and (.securityContext.capabilities.drop | index("ALL") != null))' \
        <<<"$hooks" >/dev/null &&
        ok "$label: Job pod: non-root 65532, seccomp RuntimeDefault, read-only root, drop ALL, no privilege escalation" ||
        bad "$label: the Job pod is not hardened like the controller's"
    jq -e --arg ns "$ns" '.[] | select(.kind == "Job") | .spec.template.spec.containers[0].args as $a |
        ($a | index("--uninstall")) != null and $a[($a | index("--namespace")) + 1] == $ns' \
        <<<"$hooks" >/dev/null &&
        ok "$label: Job args --uninstall --namespace $ns" || bad "$label: Job args lack --uninstall or --namespace $ns"
}
hook_checks "uninstall.yaml" "$tmp/uninstall.json" tmpl

echo "== monitoring: the monitors match what the controller and the chart create"
# the agent pods' label and port name, from the controller's sources
mon_app_key=$(sed -nE 's/^#define PLACEMENT_LABEL_APP "([^"]*)".*/\1/p' controller/placement.h)
mon_app_val=$(sed -nE 's/^#define PLACEMENT_LABEL_APP_VALUE "([^"]*)".*/\1/p' controller/placement.h)
mon_pool_ns=$(sed -nE 's/^#define PLACEMENT_LABEL_POOL_NS "([^"]*)".*/\1/p' controller/placement.h)
mon_pool_name=$(sed -nE 's/^#define PLACEMENT_LABEL_POOL_NAME "([^"]*)".*/\1/p' controller/placement.h)
mon_port=$(sed -nE 's/^#define PLACEMENT_PORT_NAME "([^"]*)".*/\1/p' controller/placement.c)
if [ -n "$mon_app_key" ] && [ -n "$mon_app_val" ] && [ -n "$mon_port" ] && [ -n "$mon_pool_ns" ] &&
    [ -n "$mon_pool_name" ]; then
    ok "agent pods: label $mon_app_key=$mon_app_val, port \"$mon_port\" (controller/placement.[ch])"
else
    bad "PLACEMENT_LABEL_APP(_VALUE), PLACEMENT_LABEL_POOL_NS/NAME or PLACEMENT_PORT_NAME not found in controller/placement.[ch]"
fi
# Prometheus' meta label of a pod label: every character outside [a-zA-Z0-9_] becomes _
meta_label() { printf '__meta_kubernetes_pod_label_%s' "${1//[^a-zA-Z0-9_]/_}"; }
# the jobs the rules and the dashboard select: job="a" or job=~"a|b" (\" in the JSON)
mon_jobs=$(cat "$CHART/files/rules.yaml" "$CHART/files/dashboard.json" 2>/dev/null |
    grep -oE 'job=~?\\?"[^"\\]*' | sed -E 's/^job=~?\\?"//' | tr '|' '\n' | sort -u)
[ -n "$mon_jobs" ] && ok "files/rules.yaml and files/dashboard.json select the jobs: $(tr '\n' ' ' <<<"$mon_jobs")" ||
    bad "files/rules.yaml, files/dashboard.json: no job=\"…\" selector found (or no such file)"
# the template as written (the rendered objects: under helm below)
grep -qE "^ *- port: $mon_port\$" "$CHART/templates/podmonitor.yaml" 2>/dev/null &&
    grep -qE "^ *$mon_app_key: $mon_app_val\$" "$CHART/templates/podmonitor.yaml" &&
    ok "templates/podmonitor.yaml: port $mon_port, selector $mon_app_key: $mon_app_val" ||
    bad "templates/podmonitor.yaml does not scrape port \"$mon_port\" of the pods labelled $mon_app_key: $mon_app_val"
# mon_checks LABEL JSON_LINES NS: the rendered PodMonitor, ServiceMonitor and Service agree
# with the agent pods, the metrics Service and the rules
mon_checks() {
    local label=$1 docs=$2 ns=$3 pm sm svc j
    pm=$(jq -c 'select(. != null and .kind == "PodMonitor")' "$docs" | head -n 1)
    sm=$(jq -c 'select(. != null and .kind == "ServiceMonitor")' "$docs" | head -n 1)
    svc=$(jq -c 'select(. != null and .kind == "Service" and (.metadata.name | endswith("-metrics")))' "$docs" | head -n 1)
    if [ -z "$pm" ] || [ -z "$sm" ] || [ -z "$svc" ]; then
        bad "$label: a PodMonitor, ServiceMonitor and Service are not all rendered"
        return
    fi
    jq -e --arg k "$mon_app_key" --arg v "$mon_app_val" --arg p "$mon_port" --arg ns "$ns" \
        '.spec.selector.matchLabels == {($k): $v} and .spec.namespaceSelector.matchNames == [$ns] and
        .metadata.namespace == $ns and (.spec.podMetricsEndpoints | length) == 1 and
        .spec.podMetricsEndpoints[0].port == $p and .spec.podMetricsEndpoints[0].path == "/metrics"' \
        <<<"$pm" >/dev/null &&
        ok "$label: PodMonitor selects $mon_app_key=$mon_app_val in $ns, port $mon_port, /metrics" ||
        bad "$label: PodMonitor selector, namespace or port differ from the agent pods ($mon_app_key=$mon_app_val, port $mon_port, namespace $ns)"
    jq -e --arg a "$(meta_label "$mon_pool_ns")" --arg b "$(meta_label "$mon_pool_name")" \
        '[.spec.podMetricsEndpoints[0].relabelings[] | select(.sourceLabels == [$a] and .targetLabel == "pool_namespace" or
            .sourceLabels == [$b] and .targetLabel == "pool")] | length == 2' <<<"$pm" >/dev/null &&
        ok "$label: PodMonitor labels pool_namespace and pool from $mon_pool_ns and $mon_pool_name" ||
        bad "$label: PodMonitor does not relabel $(meta_label "$mon_pool_ns") / $(meta_label "$mon_pool_name") to pool_namespace / pool"
    jq -e --argjson svc "$svc" --arg ns "$ns" '.metadata.namespace == $ns and
        .spec.namespaceSelector.matchNames == [$ns] and (.spec.selector.matchLabels | length) > 0 and
        (.spec.selector.matchLabels | to_entries | all(.[]; $svc.metadata.labels[.key] == .value)) and
        (.spec.endpoints | length) == 1 and .spec.endpoints[0].honorLabels == true and
        .spec.endpoints[0].path == "/metrics" and .spec.endpoints[0].port == $svc.spec.ports[0].name' \
        <<<"$sm" >/dev/null &&
        ok "$label: ServiceMonitor selects the metrics Service ($(jq -r '.metadata.name' <<<"$svc")), port $(jq -r '.spec.ports[0].name' <<<"$svc"), honorLabels" ||
        bad "$label: ServiceMonitor does not select the metrics Service by its labels and port, or lacks honorLabels"
    # the job names of the rules are the monitors' (a relabeling replacing job)
    for j in $mon_jobs; do
        jq -se --arg j "$j" 'any(.[] | select(. != null and (.kind == "PodMonitor" or .kind == "ServiceMonitor")) |
            (.spec.podMetricsEndpoints // .spec.endpoints)[].relabelings[]?;
            .targetLabel == "job" and .replacement == $j and (.sourceLabels // []) == [])' "$docs" >/dev/null &&
            ok "$label: job \"$j\" of the rules and dashboard is set by a monitor" ||
            bad "$label: no monitor sets job \"$j\", which the rules or the dashboard select"
    done
}

echo "== helm"
HELM=${HELM:-helm}
if command -v "$HELM" >/dev/null; then
    KNOBS=$CHART/ci/all-knobs-values.yaml
    OFF=$CHART/ci/admission-off-values.yaml
    # render NAME ARGS...: helm template into $tmp/NAME.yaml and JSON lines $tmp/NAME.json
    render() {
        local name=$1
        shift
        "$HELM" template "$@" >"$tmp/$name.yaml" 2>"$tmp/$name.err" &&
            "$Y2J" "$tmp/$name.yaml" >"$tmp/$name.json" 2>>"$tmp/$name.err"
    }
    ctl_args() { jq -c 'select(. != null and .kind == "Deployment") | .spec.template.spec.containers[] |
        select(.name == "controller") | .args' "$tmp/$1.json" | head -n 1; }
    # has NAME [jq args] FILTER: some rendered object of $tmp/NAME.json passes FILTER
    has() {
        local name=$1
        shift
        local filter=${*: -1}
        jq -se "${@:1:$#-1}" "any(.[]; . != null and ($filter))" "$tmp/$name.json" >/dev/null
    }
    # the value after FLAG in the args (JSON array), or "" (the first one)
    arg_of() { jq -r --arg f "$2" '. as $a | [range(length) | select($a[.] == $f) | $a[. + 1]][0] // ""' <<<"$1"; }
    # adm_checks LABEL NAME VALUES_JSON NS: the admission objects of $tmp/NAME.json as
    # admission.* says (enabled): the Service, the empty Secret, the two webhook
    # configurations (no caBundle: the program patches it), the controller's flags, port and
    # readiness, and the RBAC limited to those objects by name
    adm_checks() {
        local label=$1 name=$2 v=$3 ns=$4 a d svc sec mwc vwc
        a=$(ctl_args "$name")
        d=$(jq -c 'select(. != null and .kind == "Deployment")' "$tmp/$name.json" | head -n 1)
        svc=$(jq -c 'select(. != null and .kind == "Service" and (.metadata.name | endswith("-webhook")))' "$tmp/$name.json" | head -n 1)
        sec=$(jq -c 'select(. != null and .kind == "Secret")' "$tmp/$name.json" | head -n 1)
        mwc=$(jq -c 'select(. != null and .kind == "MutatingWebhookConfiguration")' "$tmp/$name.json" | head -n 1)
        vwc=$(jq -c 'select(. != null and .kind == "ValidatingWebhookConfiguration")' "$tmp/$name.json" | head -n 1)
        if [ -z "$d" ] || [ -z "$svc" ] || [ -z "$sec" ] || [ -z "$mwc" ] || [ -z "$vwc" ]; then
            bad "$label: admission enabled, but the Deployment, the Service *-webhook, the Secret or a webhook configuration is not rendered"
            return
        fi
        jq -e --argjson d "$d" --arg ns "$ns" '.metadata.namespace == $ns and .spec.type == "ClusterIP" and
            (.spec.ports | length) == 1 and .spec.ports[0].port == 443 and .spec.ports[0].targetPort == "webhook" and
            .spec.selector == $d.spec.selector.matchLabels' <<<"$svc" >/dev/null &&
            ok "$label: Service $(jq -r .metadata.name <<<"$svc"): 443 -> port \"webhook\" of the controller pods" ||
            bad "$label: the webhook Service is not 443 -> \"webhook\" on the controller's pods in $ns"
        jq -e --argjson v "$v" '.spec.template.spec.containers[] | select(.name == "controller") |
            any(.ports[]; .name == "webhook" and .containerPort == $v.admission.port and .protocol == "TCP") and
            .readinessProbe.httpGet.path == "/readyz" and .readinessProbe.periodSeconds <= 5' <<<"$d" >/dev/null &&
            [ "$(arg_of "$a" --webhook-listen)" = ":$(jq -r .admission.port <<<"$v")" ] &&
            ok "$label: container port webhook $(jq -r .admission.port <<<"$v"), --webhook-listen $(arg_of "$a" --webhook-listen), readiness /readyz every ≤ 5 s" ||
            bad "$label: the controller's port \"webhook\", --webhook-listen '$(arg_of "$a" --webhook-listen)' or its /readyz probe differ from admission.port"
        jq -e '.spec.strategy.type == "RollingUpdate" and .spec.strategy.rollingUpdate.maxUnavailable == 0' <<<"$d" >/dev/null &&
            ok "$label: rolling updates with maxUnavailable 0 (the webhook Service keeps an endpoint through an upgrade)" ||
            bad "$label: the controller Deployment may take a replica down before a new one is ready (strategy)"
        [ "$(arg_of "$a" --webhook-secret)" = "$(jq -r .metadata.name <<<"$sec")" ] &&
            [ "$(arg_of "$a" --webhook-service)" = "$(jq -r .metadata.name <<<"$svc")" ] &&
            [ "$(arg_of "$a" --webhook-mutating)" = "$(jq -r .metadata.name <<<"$mwc")" ] &&
            [ "$(arg_of "$a" --webhook-validating)" = "$(jq -r .metadata.name <<<"$vwc")" ] &&
            [ "$(arg_of "$a" --webhook-cert-validity)" = "$(jq -r .admission.certValidity <<<"$v")" ] &&
            [ "$(arg_of "$a" --service-cidr)" = "$(jq -r .admission.serviceCIDR <<<"$v")" ] &&
            ok "$label: --webhook-secret, --webhook-service, --webhook-mutating, --webhook-validating name the rendered objects; --webhook-cert-validity $(arg_of "$a" --webhook-cert-validity); --service-cidr '$(arg_of "$a" --service-cidr)'" ||
            bad "$label: a --webhook-* flag or --service-cidr differs from the rendered objects or admission.*: $(jq -c . <<<"$a")"
        jq -e --arg ns "$ns" '.metadata.namespace == $ns and .type == "Opaque" and (has("data") | not) and
            (has("stringData") | not) and (.metadata.name | endswith("-admission-tls")) and
            (.metadata.name | test("-webhook-(ca|tls)$") | not)' <<<"$sec" >/dev/null &&
            ok "$label: Secret $(jq -r .metadata.name <<<"$sec"): Opaque, no data (helm upgrade never resets what the program wrote), not one of the Go project's <name>-webhook-ca/-tls" ||
            bad "$label: the webhook Secret has data or stringData, or is not Opaque in $ns"
        [ "$(jq -r .metadata.name <<<"$mwc")" = "$(jq -r .metadata.name <<<"$vwc")" ] &&
            [[ $(jq -r .metadata.name <<<"$mwc") == *-admission ]] &&
            ok "$label: MutatingWebhookConfiguration and ValidatingWebhookConfiguration $(jq -r .metadata.name <<<"$mwc")" ||
            bad "$label: the webhook configurations are not both named <fullname>-admission"
        # every webhook: through the Service, no caBundle, upstream's review versions, no side
        # effects, the timeout; failurePolicy per kind
        jq -se --argjson v "$v" --argjson svc "$svc" '[.[] | select(. != null and
            (.kind == "MutatingWebhookConfiguration" or .kind == "ValidatingWebhookConfiguration")) |
            .kind as $k | .webhooks[] | . + {k: $k}] | length == 4 and all(.[];
            .clientConfig.service == {name: $svc.metadata.name, namespace: $svc.metadata.namespace,
                path: (if .k == "MutatingWebhookConfiguration" then "/mutate" else "/validate" end), port: 443} and
            (.clientConfig | has("caBundle") | not) and (.clientConfig | has("url") | not) and
            .sideEffects == "None" and .matchPolicy == "Equivalent" and
            .admissionReviewVersions == ["v1", "v1beta1"] and .timeoutSeconds == $v.admission.timeoutSeconds and
            (.name | endswith(".vm-dhcp.network.harvesterhci.io")) and
            (has("namespaceSelector") | not) and (has("objectSelector") | not) and
            .failurePolicy == (if .rules[0].apiGroups == ["kubevirt.io"] then $v.admission.vmFailurePolicy
                else $v.admission.failurePolicy end))' "$tmp/$name.json" >/dev/null &&
            ok "$label: 4 webhooks via the Service (/mutate, /validate), no caBundle, sideEffects None, matchPolicy Equivalent, v1/v1beta1, timeout $(jq -r .admission.timeoutSeconds <<<"$v") s, failurePolicy $(jq -r .admission.failurePolicy <<<"$v") (VMs: $(jq -r .admission.vmFailurePolicy <<<"$v")), fully qualified names" ||
            bad "$label: a webhook's clientConfig, caBundle, sideEffects, matchPolicy, review versions, timeout, failurePolicy or name is not as admission.* says"
        # nothing but our kinds: exactly these rules (no wildcard, no subresource)
        jq -se '[.[] | select(. != null and (.kind == "MutatingWebhookConfiguration" or
            .kind == "ValidatingWebhookConfiguration")) | .kind as $k | .webhooks[] | .rules[] |
            "\($k[0:1]) \(.apiGroups | join(",")) \(.apiVersions | join(",")) \(.resources | join(",")) \(.operations | sort | join(",")) \(.scope)"] | sort ==
            ["M network.harvesterhci.io v1alpha1 ippools CREATE Namespaced",
             "V kubevirt.io v1 virtualmachines CREATE,UPDATE Namespaced",
             "V network.harvesterhci.io v1alpha1 ippools CREATE,DELETE,UPDATE Namespaced",
             "V network.harvesterhci.io v1alpha1 virtualmachinenetworkconfigs CREATE,UPDATE Namespaced"]' \
            "$tmp/$name.json" >/dev/null &&
            ok "$label: rules: mutate ippools CREATE; validate ippools CREATE/UPDATE/DELETE, vmnetcfgs CREATE/UPDATE, kubevirt.io virtualmachines CREATE/UPDATE (nothing else, no /status)" ||
            bad "$label: the webhook rules are not exactly ours: $(jq -sc '[.[] | select(. != null and (.kind | endswith("WebhookConfiguration"))) | .webhooks[].rules]' "$tmp/$name.json")"
        # RBAC: the one Secret (a Role of the release namespace bound to the controller), the
        # two configurations by name; no rule on secrets without resourceNames
        jq -se --arg sec "$(jq -r .metadata.name <<<"$sec")" --arg ns "$ns" --arg sa "$(jq -r .spec.template.spec.serviceAccountName <<<"$d")" '
            [.[] | select(. != null)] as $o |
            [$o[] | select(.kind == "Role" and .metadata.namespace == $ns and
                any(.rules[]; .resources == ["secrets"] and .resourceNames == [$sec] and
                    ((.verbs | index("create")) == null) and ((.verbs | index("delete")) == null))) | .metadata.name] as $roles |
            ($roles | length) == 1 and
            any($o[]; .kind == "RoleBinding" and .metadata.namespace == $ns and .roleRef.name == $roles[0] and
                any(.subjects[]; .kind == "ServiceAccount" and .name == $sa and .namespace == $ns)) and
            all($o[] | select(.kind == "Role" or .kind == "ClusterRole") | .rules[] |
                select((.resources // []) | index("secrets")); .resourceNames == [$sec])' "$tmp/$name.json" >/dev/null &&
            ok "$label: RBAC: secrets only $(jq -r .metadata.name <<<"$sec") (a Role in $ns bound to the controller), no create/delete" ||
            bad "$label: RBAC on secrets is not limited to the webhook's Secret in a Role of $ns bound to the controller"
        jq -se --arg n "$(jq -r .metadata.name <<<"$mwc")" '[.[] | select(. != null and .kind == "ClusterRole") | .rules[] |
            select((.resources // []) | index("validatingwebhookconfigurations") or index("mutatingwebhookconfigurations"))] as $r |
            ($r | all(.[]; .resourceNames != null and (.resourceNames | length) > 0)) and
            any($r[]; .resourceNames == [$n] and (.verbs | index("delete")) == null and (.verbs | index("create")) == null and
                (.resources | sort) == ["mutatingwebhookconfigurations", "validatingwebhookconfigurations"]) and
            all($r[]; (.verbs | index("delete")) == null or (.resourceNames | index($n)) == null)' "$tmp/$name.json" >/dev/null &&
            ok "$label: RBAC: webhook configurations by name only; ours ($(jq -r .metadata.name <<<"$mwc")) never deletable" ||
            bad "$label: RBAC on webhook configurations: not by name, ours missing, or ours deletable"
    }
    # adm_off_checks LABEL NAME: admission.enabled false: none of it, --webhook-listen off
    adm_off_checks() {
        local label=$1 name=$2 a n
        a=$(ctl_args "$name")
        n=$(jq -s '[.[] | select(. != null and (.kind == "Secret" or .kind == "MutatingWebhookConfiguration" or
            .kind == "ValidatingWebhookConfiguration" or (.kind == "Service" and (.metadata.name | endswith("-webhook")))))] | length' "$tmp/$name.json")
        [ "$n" = 0 ] && ok "$label: no webhook Service, Secret or webhook configuration" ||
            bad "$label: $n admission objects rendered with admission.enabled false"
        [ "$(arg_of "$a" --webhook-listen)" = off ] &&
            jq -e '[.[] | select(startswith("--webhook-") or . == "--service-cidr")] == ["--webhook-listen"]' <<<"$a" >/dev/null &&
            ok "$label: --webhook-listen off, no other admission flag" ||
            bad "$label: admission flags with admission.enabled false: $(jq -c '[.[] | select(startswith("--webhook-") or . == "--service-cidr")]' <<<"$a")"
        jq -se '[.[] | select(. != null and (.kind == "Deployment")) | .spec.template.spec.containers[].ports[] |
            select(.name == "webhook")] | length == 0' "$tmp/$name.json" >/dev/null &&
            jq -se '[.[] | select(. != null and (.kind == "Role" or .kind == "ClusterRole")) | .rules[] |
                select(((.resources // []) | index("secrets")) or
                    (((.resources // []) | index("validatingwebhookconfigurations")) and ((.verbs | index("delete")) == null)))] |
                length == 0' "$tmp/$name.json" >/dev/null &&
            ok "$label: no webhook port, no rule on secrets or on our webhook configurations" ||
            bad "$label: a webhook port or an admission RBAC rule is rendered with admission.enabled false"
    }
    for f in "" "$KNOBS"; do
        what=${f:+with $(basename "$f")}
        if "$HELM" lint "$CHART" ${f:+-f "$f"} >"$tmp/lint" 2>&1; then
            ok "helm lint ${what:-(default values)}"
        else
            bad "helm lint ${what:-(default values)}:"
            cat "$tmp/lint"
        fi
    done
    rendered=0
    if render default t "$CHART" --namespace vmdhcp; then
        rendered=$((rendered + 1))
        ok "helm template renders parseable YAML (default values)"
    else
        bad "helm template (default values): $(grep -v 'symbolic link' "$tmp/default.err")"
    fi
    if render knobs t "$CHART" --namespace vmdhcp -f "$KNOBS"; then
        rendered=$((rendered + 1))
        ok "helm template renders parseable YAML ($(basename "$KNOBS"))"
    else
        bad "helm template ($(basename "$KNOBS")): $(grep -v 'symbolic link' "$tmp/knobs.err")"
    fi
    if [ "$rendered" = 2 ]; then
        rbac_objects "rendered" "$tmp/default.json"

        # the uninstall hook as rendered: its Job's args accepted, the controller's image
        hook_checks "rendered" "$tmp/default.json" vmdhcp
        a=$(jq -c 'select(. != null and .kind == "Job") | .spec.template.spec.containers[0].args' "$tmp/default.json" | head -n 1)
        mapfile -t argv < <(jq -r '.[]?' <<<"$a")
        if [ -n "$a" ] && "$CTL" "${argv[@]}" --help >/dev/null 2>"$tmp/err"; then
            ok "uninstall Job: vm-dhcp-controller accepts $(jq -r 'join(" ")' <<<"$a")"
        else
            bad "uninstall Job: vm-dhcp-controller refuses the rendered args '$a': $(cat "$tmp/err")"
        fi
        for name in default knobs; do
            img=$(jq -r 'select(. != null and (.kind == "Deployment" or .kind == "Job")) |
                .spec.template.spec.containers[0].image' "$tmp/$name.json" | sort -u)
            [ "$(wc -l <<<"$img")" = 1 ] && ok "$name: the uninstall Job runs the controller image ($img)" ||
                bad "$name: the uninstall Job and the controller run different images: $(tr '\n' ' ' <<<"$img")"
        done
        if render nohook t "$CHART" --namespace vmdhcp --set cleanupOnUninstall=false; then
            n=$(jq -s '[.[] | select(. != null and (.kind == "Job" or (.metadata.name | endswith("-uninstall"))))] | length' "$tmp/nohook.json")
            [ "$n" = 0 ] && ok "cleanupOnUninstall=false: no hook Job, ServiceAccount or RBAC" ||
                bad "cleanupOnUninstall=false still renders $n hook objects"
        else
            bad "helm template --set cleanupOnUninstall=false: $(grep -v 'symbolic link' "$tmp/nohook.err")"
        fi

        # every knob reaches the controller (JSON flags equal to the values) and is accepted by it
        kv=$("$Y2J" "$KNOBS" | head -n 1)
        for name in default knobs; do
            [ $name = default ] && v=$values || v=$kv
            a=$(ctl_args "$name")
            [ -n "$a" ] || { bad "$name: no controller args rendered"; continue; }
            for pair in "--agent-resources:.agent.resources" "--agent-node-selector:.agent.nodeSelector" \
                "--agent-tolerations:.agent.tolerations"; do
                flag=${pair%%:*}
                want=$(jq -cS "${pair#*:} // empty" <<<"$v")
                got=$(arg_of "$a" "$flag" | jq -cS . 2>/dev/null)
                case $flag in
                    --agent-node-selector) [ -n "$want" ] || want='{}' ;;
                    --agent-tolerations) [ -n "$want" ] || want='[]' ;;
                esac
                [ -n "$got" ] && [ "$got" = "$want" ] && ok "$name: $flag $got" ||
                    bad "$name: $flag is '$(arg_of "$a" "$flag")', want JSON $want"
            done
            for pair in "--agent-interface:.agent.interface" "--agent-image-pull-policy:.agent.image.pullPolicy" \
                "--agent-priority-class:.agent.priorityClassName" "--agent-replicas:.agent.replicas" \
                "--agent-lease-duration:.agent.leaderElection.leaseDuration" \
                "--agent-renew-deadline:.agent.leaderElection.renewDeadline" \
                "--agent-retry-period:.agent.leaderElection.retryPeriod"; do
                flag=${pair%%:*}
                want=$(jq -r "${pair#*:} // \"\"" <<<"$v")
                got=$(arg_of "$a" "$flag")
                [ "$got" = "$want" ] && ok "$name: $flag '$got'" || bad "$name: $flag '$got', want '$want'"
            done
            want=$(jq -r '[.imagePullSecrets[]?.name] | join(" ")' <<<"$v")
            got=$(jq -r '. as $a | [range(length) | select($a[.] == "--agent-image-pull-secret") | $a[. + 1]] | join(" ")' <<<"$a")
            [ "$got" = "$want" ] && ok "$name: --agent-image-pull-secret for each imagePullSecrets entry ($got)" ||
                bad "$name: --agent-image-pull-secret '$got', want '$want'"
            got=$(arg_of "$a" --agent-service-account)
            [ -n "$got" ] && has "$name" --arg s "$got" '.kind == "ServiceAccount" and .metadata.name == $s' &&
                has "$name" --arg s "$got" '.kind == "ClusterRoleBinding" and (.metadata.name | endswith("-agent")) and
                    any(.subjects[]; .kind == "ServiceAccount" and .name == $s)' &&
                ok "$name: --agent-service-account $got is a rendered ServiceAccount, bound to the agent ClusterRole" ||
                bad "$name: --agent-service-account '$got' is not a rendered ServiceAccount bound to the agent ClusterRole"
            # the election durations in the order the controller checks once every flag is
            # parsed (after the --help below would have exited)
            jq -e '.agent.leaderElection | .retryPeriod < .renewDeadline and .renewDeadline < .leaseDuration' \
                <<<"$v" >/dev/null && ok "$name: agent.leaderElection retryPeriod < renewDeadline < leaseDuration" ||
                bad "$name: agent.leaderElection is not retryPeriod < renewDeadline < leaseDuration"
            # the controller parses every flag as rendered (knobs validated at start), then --help
            mapfile -t argv < <(argv_of "$a")
            if "$CTL" "${argv[@]}" --help >/dev/null 2>"$tmp/err"; then
                ok "$name: vm-dhcp-controller accepts the rendered args"
            else
                bad "$name: vm-dhcp-controller refuses the rendered args: $(cat "$tmp/err")"
            fi
        done
        img=$(jq -r 'select(. != null and .kind == "Deployment") | .spec.template.spec.containers[0].image' "$tmp/knobs.json")
        agent_img=$(arg_of "$(ctl_args knobs)" --agent-image)
        want_c=$(jq -r '.controller.image | "\(.repository)@\(.digest)"' <<<"$kv")
        want_a=$(jq -r '.agent.image | "\(.repository)@\(.digest)"' <<<"$kv")
        [ "$img" = "$want_c" ] && [ "$agent_img" = "$want_a" ] && ok "image digests: repository@sha256:… for both images" ||
            bad "image digests: controller '$img' (want $want_c), agent '$agent_img' (want $want_a)"
        got=$(jq -r 'select(. != null and .kind == "Deployment") | .spec.template.spec.imagePullSecrets // [] | map(.name) | join(" ")' "$tmp/knobs.json")
        [ "$got" = "$(jq -r '[.imagePullSecrets[].name] | join(" ")' <<<"$kv")" ] &&
            ok "imagePullSecrets on the controller pods ($got)" || bad "controller imagePullSecrets '$got'"

        # the controller Deployment: spread, PDB, no privilege escalation
        has default '.kind == "Deployment" and any(.spec.template.spec.topologySpreadConstraints[]?;
            .topologyKey == "kubernetes.io/hostname" and .whenUnsatisfiable == "ScheduleAnyway")' &&
            ok "controller replicas spread over nodes (hostname, ScheduleAnyway: one node still runs both)" ||
            bad "no topologySpreadConstraints on kubernetes.io/hostname with ScheduleAnyway"
        has default '.kind == "Deployment" and any(.spec.template.spec.containers[]; .name == "controller" and
            .securityContext.allowPrivilegeEscalation == false)' && ok "controller: allowPrivilegeEscalation false" ||
            bad "controller: allowPrivilegeEscalation is not false"
        n=$(jq -s '[.[] | select(. != null and .kind == "PodDisruptionBudget" and .spec.minAvailable == 1)] | length' "$tmp/default.json")
        [ "$n" = 1 ] && ok "PodDisruptionBudget minAvailable 1 with 2 replicas" || bad "$n PodDisruptionBudgets (minAvailable 1) with 2 replicas, want 1"
        render one t "$CHART" --set controller.replicas=1 &&
            n=$(jq -s '[.[] | select(. != null and .kind == "PodDisruptionBudget")] | length' "$tmp/one.json") || n=error
        [ "$n" = 0 ] && ok "no PodDisruptionBudget with 1 replica" || bad "$n PodDisruptionBudgets with 1 replica, want 0"
        # policy/v1 where the API server serves it (1.21+), policy/v1beta1 on 1.20
        for av in "policy/v1beta1:1.20 (no policy/v1)" "policy/v1:policy/v1 served"; do
            # shellcheck disable=SC2046
            render pdb t "$CHART" $([ "${av%%:*}" = policy/v1 ] && echo --api-versions=policy/v1/PodDisruptionBudget) &&
                v=$(jq -r 'select(. != null and .kind == "PodDisruptionBudget") | .apiVersion' "$tmp/pdb.json") || v=error
            [ "$v" = "${av%%:*}" ] && ok "PodDisruptionBudget $v (${av#*:})" ||
                bad "PodDisruptionBudget apiVersion '$v', want ${av%%:*} (${av#*:})"
        done

        # monitoring: nothing by default; with every knob (and no monitoring.coreos.com/v1 API
        # given to helm template) all four, as the knobs say
        n=$(jq -s '[.[] | select(. != null and (.kind == "PodMonitor" or .kind == "ServiceMonitor" or
            .kind == "PrometheusRule" or .kind == "ConfigMap"))] | length' "$tmp/default.json")
        [ "$n" = 0 ] && ok "default values: no PodMonitor, ServiceMonitor, PrometheusRule or dashboard ConfigMap" ||
            bad "default values render $n monitoring objects, want 0 (all off by default)"
        kinds=$(jq -r 'select(. != null and (.kind == "PodMonitor" or .kind == "ServiceMonitor" or
            .kind == "PrometheusRule" or .kind == "ConfigMap")) | .kind' "$tmp/knobs.json" | sort | tr '\n' ' ')
        [ "$kinds" = "ConfigMap PodMonitor PrometheusRule ServiceMonitor " ] &&
            ok "all knobs: $kinds(rendered without the monitoring.coreos.com/v1 API: enabled means rendered)" ||
            bad "all knobs render '$kinds', want ConfigMap PodMonitor PrometheusRule ServiceMonitor"
        mon_checks "all knobs" "$tmp/knobs.json" vmdhcp
        for mon in podMonitor:PodMonitor:podMetricsEndpoints serviceMonitor:ServiceMonitor:endpoints; do
            IFS=: read -r key kind eps <<<"$mon"
            jq -se --argjson v "$kv" --arg key "$key" --arg kind "$kind" --arg eps "$eps" '
                [.[] | select(. != null and .kind == $kind)][0] as $o | $v.monitoring[$key] as $k |
                $o.spec[$eps][0].interval == $k.interval and
                ($k.labels | to_entries | all(.[]; $o.metadata.labels[.key] == .value))' \
                "$tmp/knobs.json" >/dev/null &&
                ok "all knobs: $kind interval and labels from monitoring.$key" ||
                bad "all knobs: $kind interval or labels differ from monitoring.$key"
        done
        # the PrometheusRule ships files/rules.yaml unchanged
        want=$("$Y2J" "$CHART/files/rules.yaml" 2>/dev/null | jq -cS .)
        got=$(jq -cS 'select(. != null and .kind == "PrometheusRule") | .spec' "$tmp/knobs.json")
        [ -n "$want" ] && [ "$got" = "$want" ] &&
            ok "PrometheusRule spec == files/rules.yaml ($(jq '[.groups[].rules[]] | length' <<<"$want") rules)" ||
            bad "PrometheusRule spec differs from files/rules.yaml"
        jq -se --argjson v "$kv" '[.[] | select(. != null and .kind == "PrometheusRule")][0] as $o |
            ($v.monitoring.prometheusRule.labels | to_entries | all(.[]; $o.metadata.labels[.key] == .value))' \
            "$tmp/knobs.json" >/dev/null && ok "all knobs: PrometheusRule labels from monitoring.prometheusRule.labels" ||
            bad "all knobs: PrometheusRule labels differ from monitoring.prometheusRule.labels"
        # the dashboard ConfigMap: the file's JSON, the sidecar label, namespace and annotations
        want=$(jq -cS . "$CHART/files/dashboard.json" 2>/dev/null)
        got=$(jq -r 'select(. != null and .kind == "ConfigMap") | .data["vm-dhcp.json"]' "$tmp/knobs.json" | jq -cS . 2>/dev/null)
        [ -n "$want" ] && [ "$got" = "$want" ] && ok "dashboard ConfigMap: vm-dhcp.json == files/dashboard.json" ||
            bad "dashboard ConfigMap: vm-dhcp.json differs from files/dashboard.json (or is not JSON)"
        jq -se --argjson v "$kv" '[.[] | select(. != null and .kind == "ConfigMap")][0] as $o |
            $v.monitoring.grafanaDashboard as $d | $o.metadata.namespace == $d.namespace and
            $o.metadata.labels[$d.sidecarLabel] == $d.sidecarLabelValue and $o.metadata.annotations == $d.annotations and
            ($d.labels | to_entries | all(.[]; $o.metadata.labels[.key] == .value))' "$tmp/knobs.json" >/dev/null &&
            ok "all knobs: dashboard ConfigMap namespace, sidecar label, labels and annotations from monitoring.grafanaDashboard" ||
            bad "all knobs: dashboard ConfigMap namespace, sidecar label, labels or annotations differ from monitoring.grafanaDashboard"
        if render dash t "$CHART" --namespace vmdhcp --set monitoring.grafanaDashboard.enabled=true; then
            jq -se '[.[] | select(. != null and .kind == "ConfigMap")] | length == 1 and .[0].metadata.namespace == "vmdhcp" and
                .[0].metadata.labels.grafana_dashboard == "1"' "$tmp/dash.json" >/dev/null &&
                ok "dashboard ConfigMap by default: release namespace, label grafana_dashboard: \"1\" (the sidecar's default)" ||
                bad "dashboard ConfigMap by default: not in the release namespace or without grafana_dashboard: \"1\""
        else
            bad "helm template --set monitoring.grafanaDashboard.enabled=true: $(grep -v 'symbolic link' "$tmp/dash.err")"
        fi
        if render nosvc t "$CHART" --set monitoring.serviceMonitor.enabled=true --set metrics.service.enabled=false; then
            bad "a ServiceMonitor without the metrics Service renders"
        elif grep -q 'monitoring.serviceMonitor.enabled needs metrics.service.enabled' "$tmp/nosvc.err"; then
            ok "a ServiceMonitor without the metrics Service is refused, saying why"
        else
            bad "ServiceMonitor without the metrics Service fails, but not with its message: $(grep -v 'symbolic link' "$tmp/nosvc.err")"
        fi

        # the agents' election: helm --set gives decimals as strings, which pass as they are;
        # durations out of order are refused when rendering, not by a crash-looping controller
        if render dec t "$CHART" --set agent.leaderElection.retryPeriod=0.5 --set agent.leaderElection.leaseDuration=2.25 \
            --set agent.replicas=1; then
            a=$(ctl_args dec)
            [ "$(arg_of "$a" --agent-retry-period) $(arg_of "$a" --agent-lease-duration) $(arg_of "$a" --agent-replicas)" = "0.5 2.25 1" ] &&
                ok "--set agent.leaderElection.retryPeriod=0.5 (a string), leaseDuration=2.25, replicas=1 reach the controller" ||
                bad "--set decimals: --agent-retry-period '$(arg_of "$a" --agent-retry-period)', --agent-lease-duration '$(arg_of "$a" --agent-lease-duration)', --agent-replicas '$(arg_of "$a" --agent-replicas)'"
        else
            bad "helm template --set agent.leaderElection.retryPeriod=0.5: $(grep -v 'symbolic link' "$tmp/dec.err")"
        fi
        for set in agent.leaderElection.leaseDuration=1 agent.leaderElection.retryPeriod=1.5; do
            if render order t "$CHART" --set "$set"; then
                bad "--set $set (out of order with the defaults) renders"
            elif grep -q 'retryPeriod (.*) < renewDeadline (.*) < leaseDuration (.*) must hold' "$tmp/order.err"; then
                ok "--set $set is refused: retryPeriod < renewDeadline < leaseDuration must hold"
            else
                bad "--set $set fails, but not with its message: $(grep -v 'symbolic link' "$tmp/order.err")"
            fi
        done
        # admission: default values, every knob, off, the VM webhook's matchCondition (1.28+)
        echo "== admission (templates/webhook.yaml)"
        adm_checks "default" default "$values" vmdhcp
        adm_checks "all knobs" knobs "$kv" vmdhcp
        if render off t "$CHART" --namespace vmdhcp -f "$OFF"; then
            adm_off_checks "$(basename "$OFF")" off
            mapfile -t argv < <(argv_of "$(ctl_args off)")
            "$CTL" "${argv[@]}" --help >/dev/null 2>"$tmp/err" &&
                ok "$(basename "$OFF"): vm-dhcp-controller accepts the rendered args" ||
                bad "$(basename "$OFF"): vm-dhcp-controller refuses the rendered args: $(cat "$tmp/err")"
        else
            bad "helm template -f $OFF: $(grep -v 'symbolic link' "$tmp/off.err")"
        fi
        for kv_mc in 1.25.0:0 1.28.0:1; do
            if render mc t "$CHART" --kube-version "${kv_mc%%:*}"; then
                jq -se --argjson want "${kv_mc#*:}" '[.[] | select(. != null and .kind == "ValidatingWebhookConfiguration") |
                    .webhooks[] | select(has("matchConditions")) | select(.rules[0].apiGroups == ["kubevirt.io"] and
                        (.matchConditions[0].expression | contains("static-ip.harvesterhci.io/")))] | length == $want' \
                    "$tmp/mc.json" >/dev/null &&
                    ok "Kubernetes ${kv_mc%%:*}: $([ "${kv_mc#*:}" = 1 ] && echo "the VM webhook sends only VMs with a static-ip annotation (matchConditions)" || echo "no matchConditions (before 1.28)")" ||
                    bad "Kubernetes ${kv_mc%%:*}: matchConditions on the VM webhook: want ${kv_mc#*:}"
            else
                bad "helm template --kube-version ${kv_mc%%:*}: $(grep -v 'symbolic link' "$tmp/mc.err")"
            fi
        done
        if render ours t "$CHART" --namespace vmdhcp --set 'migration.upstreamWebhookConfigurations={t-vm-dhcp-admission}'; then
            bad "migration.upstreamWebhookConfigurations naming our own webhook configurations renders"
        elif grep -q "this chart's own webhook configurations" "$tmp/ours.err"; then
            ok "migration.upstreamWebhookConfigurations naming our own configurations is refused, saying why"
        else
            bad "migration.upstreamWebhookConfigurations={t-vm-dhcp-admission} fails, but not with its message: $(grep -v 'symbolic link' "$tmp/ours.err")"
        fi
    else
        bad "checks of the rendered objects not run: helm template failed above"
    fi

    # The Go project's values file (ci/upstream-values.yaml, its chart/values.yaml unchanged)
    # installs, and its keys reach the objects; ci/upstream-knobs-values.yaml sets each of its
    # keys away from the default and moves the leader Lease.
    UPV=$CHART/ci/upstream-values.yaml
    UPK=$CHART/ci/upstream-knobs-values.yaml
    for f in "$UPV" "$UPK" "$OFF"; do
        if "$HELM" lint "$CHART" -f "$f" >"$tmp/lint" 2>&1; then
            ok "helm lint with $(basename "$f")"
        else
            bad "helm lint with $(basename "$f"):"
            cat "$tmp/lint"
        fi
    done
    # dep_of NAME: the controller Deployment of $tmp/NAME.json
    dep_of() { jq -c 'select(. != null and .kind == "Deployment")' "$tmp/$1.json" | head -n 1; }
    if render up t "$CHART" --namespace vmdhcp -f "$UPV"; then
        ok "helm template with $(basename "$UPV") (the Go project's values file, unchanged)"
        uv=$("$Y2J" "$UPV" | head -n 1)
        d=$(dep_of up)
        a=$(ctl_args up)
        jq -e --argjson v "$uv" '.spec.replicas == $v.replicaCount and
            .spec.template.spec.containers[0].image == "\($v.image.repository):\($v.image.tag)" and
            .spec.template.spec.containers[0].imagePullPolicy == $v.image.pullPolicy' <<<"$d" >/dev/null &&
            ok "$(basename "$UPV"): replicas, image and pull policy from replicaCount and image.*" ||
            bad "$(basename "$UPV"): replicas, image or pull policy differ from replicaCount / image.*"
        [ "$(arg_of "$a" --agent-image) $(arg_of "$a" --agent-image-pull-policy)" = \
            "$(jq -r '"\(.agent.image.repository):\(.agent.image.tag) \(.agent.image.pullPolicy)"' <<<"$uv")" ] &&
            ok "$(basename "$UPV"): --agent-image and its pull policy from agent.image.*" ||
            bad "$(basename "$UPV"): --agent-image '$(arg_of "$a" --agent-image)' differs from agent.image.*"
        has up --argjson v "$uv" '.kind == "Service" and .spec.type == $v.service.type and
            .spec.ports[0].port == $v.service.metricsPort' &&
            ok "$(basename "$UPV"): the metrics Service's type and port from service.type and .metricsPort" ||
            bad "$(basename "$UPV"): no Service of service.type on service.metricsPort"
        n=$(jq -s '[.[] | select(. != null and .kind == "ServiceAccount" and
            (.metadata.name | endswith("-uninstall") | not) and .automountServiceAccountToken == true)] | length' "$tmp/up.json")
        [ "$n" = 2 ] && ok "$(basename "$UPV"): serviceAccount.create and .automount: 2 ServiceAccounts, token mounted" ||
            bad "$(basename "$UPV"): $n ServiceAccounts with automountServiceAccountToken true, want 2"
        has up '.kind == "Role" and .metadata.namespace == "kube-system" and
            any(.rules[]; .resourceNames == ["vm-dhcp-controllers"] and (.verbs | sort) == ["get", "update"]) and
            any(.rules[]; .resourceNames == null and .verbs == ["create"])' &&
            ok "$(basename "$UPV"): a Role in kube-system: get, update on the Lease vm-dhcp-controllers, create" ||
            bad "$(basename "$UPV"): no Role in kube-system granting get/update on vm-dhcp-controllers and create"
        has up --arg sa "$(jq -r '.spec.template.spec.serviceAccountName' <<<"$d")" '.kind == "RoleBinding" and
            .metadata.namespace == "kube-system" and any(.subjects[]; .name == $sa and .namespace == "vmdhcp")' &&
            ok "$(basename "$UPV"): bound in kube-system to the controller's ServiceAccount" ||
            bad "$(basename "$UPV"): no RoleBinding in kube-system for the controller's ServiceAccount"
        [ "$(arg_of "$a" --lease-namespace)/$(arg_of "$a" --lease-name)" = kube-system/vm-dhcp-controllers ] &&
            ok "$(basename "$UPV"): the controller elects on kube-system/vm-dhcp-controllers (the Go project's Lease)" ||
            bad "$(basename "$UPV"): the controller's Lease is $(arg_of "$a" --lease-namespace)/$(arg_of "$a" --lease-name)"
        mapfile -t argv < <(argv_of "$a")
        "$CTL" "${argv[@]}" --help >/dev/null 2>"$tmp/err" &&
            ok "$(basename "$UPV"): vm-dhcp-controller accepts the rendered args" ||
            bad "$(basename "$UPV"): vm-dhcp-controller refuses the rendered args: $(cat "$tmp/err")"
        n=$(jq -s '[.[] | select(. != null and .kind == "Deployment")] | length' "$tmp/up.json")
        [ "$n" = 1 ] && ok "$(basename "$UPV"): webhook.* accepted, no webhook Deployment (the controller serves admission)" ||
            bad "$(basename "$UPV"): $n Deployments, want 1"
    else
        bad "helm template with $(basename "$UPV"): $(grep -v 'symbolic link' "$tmp/up.err")"
    fi
    if render upk t "$CHART" --namespace vmdhcp -f "$UPK"; then
        ok "helm template with $(basename "$UPK")"
        uv=$("$Y2J" "$UPK" | head -n 1)
        d=$(dep_of upk)
        a=$(ctl_args upk)
        jq -e --argjson v "$uv" '.spec.template as $t | $t.spec.containers[0] as $c |
            (.spec | has("replicas") | not) and
            $c.image == "\($v.image.repository):\($v.image.tag)" and $c.imagePullPolicy == $v.image.pullPolicy and
            $c.resources == $v.resources and $t.spec.nodeSelector == $v.nodeSelector and
            $t.spec.tolerations == $v.tolerations and $t.spec.affinity == $v.affinity and
            ($v.podAnnotations | to_entries | all(.[]; $t.metadata.annotations[.key] == .value)) and
            ($v.podLabels | to_entries | all(.[]; $t.metadata.labels[.key] == .value)) and
            $t.spec.securityContext.fsGroup == $v.podSecurityContext.fsGroup and
            $t.spec.securityContext.runAsNonRoot == true and
            $c.securityContext.runAsUser == $v.securityContext.runAsUser and
            $c.securityContext.allowPrivilegeEscalation == false and
            $t.spec.volumes == $v.volumes and $c.volumeMounts == $v.volumeMounts and
            $t.spec.serviceAccountName == $v.serviceAccount.name and
            ($t.spec.imagePullSecrets | map(.name)) == ($v.imagePullSecrets | map(.name))' <<<"$d" >/dev/null &&
            ok "$(basename "$UPK"): image.*, resources, nodeSelector, tolerations, affinity, podAnnotations, podLabels, pod/container securityContext (merged over ours), volumes, volumeMounts, serviceAccount.name reach the Deployment; autoscaling: no replicas" ||
            bad "$(basename "$UPK"): an upstream key does not reach the controller Deployment as it should"
        [ "$(arg_of "$a" --agent-service-account)" = "$(jq -r '.serviceAccount.name' <<<"$uv")-agent" ] &&
            [ "$(arg_of "$a" --lease-namespace)/$(arg_of "$a" --lease-name)" = \
                "$(jq -r '.controller.leaderElection | "\(.namespace)/\(.name)"' <<<"$uv")" ] &&
            ok "$(basename "$UPK"): agents' ServiceAccount <serviceAccount.name>-agent; --lease-namespace/--lease-name from controller.leaderElection" ||
            bad "$(basename "$UPK"): --agent-service-account '$(arg_of "$a" --agent-service-account)' or the Lease args differ"
        n=$(jq -s '[.[] | select(. != null and .kind == "ServiceAccount" and (.metadata.name | endswith("-uninstall") | not))] | length' "$tmp/upk.json")
        [ "$n" = 0 ] && ok "$(basename "$UPK"): serviceAccount.create false: no ServiceAccount but the hook's" ||
            bad "$(basename "$UPK"): serviceAccount.create false still renders $n ServiceAccounts"
        has upk --argjson v "$uv" '.kind == "Role" and .metadata.namespace == $v.controller.leaderElection.namespace and
            (.metadata.name | endswith("-lease-controller")) and
            any(.rules[]; .resourceNames == [$v.controller.leaderElection.name])' &&
            has upk --argjson v "$uv" '.kind == "Role" and .metadata.namespace == $v.controller.leaderElection.namespace and
            (.metadata.name | endswith("-lease-uninstall")) and any(.rules[]; .resourceNames == [$v.controller.leaderElection.name])' &&
            ok "$(basename "$UPK"): the Lease's Roles (controller, uninstall hook) follow controller.leaderElection" ||
            bad "$(basename "$UPK"): the Lease's Roles are not in controller.leaderElection.namespace for its name"
        has upk --argjson v "$uv" '.kind == "Service" and .spec.type == $v.service.type and .spec.ports[0].port == $v.service.metricsPort' &&
            has upk --argjson v "$uv" '.kind == "HorizontalPodAutoscaler" and .spec.minReplicas == $v.autoscaling.minReplicas and
                .spec.maxReplicas == $v.autoscaling.maxReplicas and (.spec.metrics | length) == 2' &&
            has upk --argjson v "$uv" '.kind == "Ingress" and .spec.ingressClassName == $v.ingress.className and
                .spec.rules[0].host == $v.ingress.hosts[0].host and .spec.tls[0].secretName == $v.ingress.tls[0].secretName and
                .spec.rules[0].http.paths[0].backend.service.port.name == "http"' &&
            ok "$(basename "$UPK"): service.*, autoscaling.* (HorizontalPodAutoscaler), ingress.* (an Ingress to the metrics Service)" ||
            bad "$(basename "$UPK"): the Service, HorizontalPodAutoscaler or Ingress differ from service.*, autoscaling.*, ingress.*"
        mapfile -t argv < <(argv_of "$a")
        "$CTL" "${argv[@]}" --help >/dev/null 2>"$tmp/err" &&
            ok "$(basename "$UPK"): vm-dhcp-controller accepts the rendered args" ||
            bad "$(basename "$UPK"): vm-dhcp-controller refuses the rendered args: $(cat "$tmp/err")"
    else
        bad "helm template with $(basename "$UPK"): $(grep -v 'symbolic link' "$tmp/upk.err")"
    fi
    # precedence: our keys when the Go project's are unset; theirs win when set
    if render prec t "$CHART" --set controller.replicas=4 --set controller.image.tag=v1 &&
        render prec2 t "$CHART" --set controller.replicas=4 --set replicaCount=0 --set controller.image.tag=v1 \
            --set image.tag=v2; then
        [ "$(dep_of prec | jq -r '"\(.spec.replicas) \(.spec.template.spec.containers[0].image)"')" = "4 vm-dhcp/vm-dhcp-controller:v1" ] &&
            [ "$(dep_of prec2 | jq -r '"\(.spec.replicas) \(.spec.template.spec.containers[0].image)"')" = "0 vm-dhcp/vm-dhcp-controller:v2" ] &&
            ok "precedence: controller.replicas / controller.image.tag unless replicaCount / image.tag are set (0 counts)" ||
            bad "precedence: $(dep_of prec | jq -r '"\(.spec.replicas) \(.spec.template.spec.containers[0].image)"') / $(dep_of prec2 | jq -r '"\(.spec.replicas) \(.spec.template.spec.containers[0].image)"')"
    else
        bad "helm template for the precedence checks: $(grep -v 'symbolic link' "$tmp/prec.err" "$tmp/prec2.err")"
    fi
    # the chart under the Go project's name (scripts/chart-harvester.sh, for Harvester's Addon)
    if scripts/chart-harvester.sh "$tmp/hchart" >"$tmp/hc.out" 2>&1 &&
        [ -e "$tmp/hchart/harvester-vm-dhcp-controller-$(sed -n 's/^version: //p' "$CHART/Chart.yaml").tgz" ] &&
        render hc harvester-vm-dhcp-controller "$tmp/hchart/harvester-vm-dhcp-controller" \
            --namespace harvester-system -f "$UPV" &&
        jq -se '[.[] | select(. != null and .kind == "Deployment")][0].metadata.name == "harvester-vm-dhcp-controller-controller"' \
            "$tmp/hc.json" >/dev/null &&
        jq -e '.entries["harvester-vm-dhcp-controller"][0].name == "harvester-vm-dhcp-controller"' \
            <("$Y2J" "$tmp/hchart/index.yaml" | head -n 1) >/dev/null; then
        ok "scripts/chart-harvester.sh: chart harvester-vm-dhcp-controller packaged with a repository index; release harvester-vm-dhcp-controller renders with $(basename "$UPV")"
    else
        bad "scripts/chart-harvester.sh: $(cat "$tmp/hc.out") $(grep -v 'symbolic link' "$tmp/hc.err" 2>/dev/null)"
    fi

    # names and label values within 63 characters with the longest names helm allows
    long53=$(printf 'r%.0s' $(seq 53))
    long60=$(printf 'f%.0s' $(seq 60))
    for case in "release name of 53 (helm's maximum):$long53" \
        "fullnameOverride of 60:t --set fullnameOverride=$long60" \
        "nameOverride of 60:$long53 --set nameOverride=$long60"; do
        # shellcheck disable=SC2086
        if render long ${case#*:} "$CHART" --namespace vmdhcp -f "$KNOBS" --set serviceAccount.controller= \
            --set serviceAccount.agent=; then
            over=$(jq -r 'select(. != null) | (.metadata.name, (.metadata.labels // {} | .[]),
                (.spec.template.metadata.labels // {} | .[]), (.subjects // [] | .[].name),
                (.roleRef.name // empty), (.spec.template.spec.serviceAccountName // empty)) |
                select(length > 63)' "$tmp/long.json")
            names=$(jq -r 'select(. != null) | "\(.kind)/\(.metadata.name)"' "$tmp/long.json" | sort)
            dup=$(uniq -d <<<"$names")
            [ -z "$over" ] && [ -z "$dup" ] && ok "${case%%:*}: every name and label value ≤ 63, names distinct" ||
                bad "${case%%:*}: over 63: $over; duplicates: $dup"
            got=$(arg_of "$(ctl_args long)" --agent-service-account)
            has long --arg s "$got" '.kind == "ServiceAccount" and .metadata.name == $s' &&
                ok "${case%%:*}: --agent-service-account $got is the rendered agent ServiceAccount" ||
                bad "${case%%:*}: --agent-service-account $got is not rendered"
        else
            bad "${case%%:*}: helm template: $(grep -v 'symbolic link' "$tmp/long.err")"
        fi
    done
    # the schema refuses typo'd keys and bad values
    for set in agent.interfce=eth1 controller.imge.tag=x agent.image.pullPolicy=always \
        agent.image.digest=sha256:abc controller.logLevel=verbose agent.tolerations[0].efect=NoSchedule \
        agent.resources.request.cpu=1m metrics.service.enabld=false cleanupOnUninstall=yes \
        monitoring.podMonitor.enabld=true monitoring.serviceMonitor.interval=30sec \
        monitoring.prometheusRule.enabled=yes monitoring.grafanaDashboard.sidecarLabel= \
        agent.replicas=0 agent.replicas=11 agent.leaderElection.leseDuration=2 \
        agent.leaderElection.leaseDuration=0.5 agent.leaderElection.retryPeriod=0.0001 \
        agent.leaderElection.renewDeadline=0 agent.leaderElection.retryPeriod=1s \
        image.tga=x image.pullPolicy=sometimes replicaCount=-1 service.tpye=NodePort \
        service.metricsPort=0 webhook.imge.tag=x ingress.enabeld=true autoscaling.minReplicas=0 \
        serviceAccount.craete=false controller.leaderElection.nmae=x \
        controller.leaderElection.namespace=Kube_System admission.enabeld=false \
        admission.failurePolicy=fail admission.vmFailurePolicy=Never admission.timeoutSeconds=31 \
        admission.timeoutSeconds=0 admission.certValidity=60 admission.serviceCIDR=10.43.0.0/33 \
        admission.serviceCIDR=10.43.0.0 admission.port=0; do
        if render bad t "$CHART" --set "$set"; then
            bad "schema accepts --set $set"
        elif grep -q "values don't meet the specifications of the schema" "$tmp/bad.err"; then
            ok "schema refuses --set $set ($(grep -m1 '^- ' "$tmp/bad.err" | cut -c3-))"
        else
            bad "--set $set fails, but not by the schema: $(grep -v 'symbolic link' "$tmp/bad.err")"
        fi
    done
    # kubeVersion: the CRDs need apiextensions.k8s.io/v1 (1.16+); the test cluster is 1.20
    for kv_ok in 1.20.2 1.25.0; do
        render kv t "$CHART" --kube-version "$kv_ok" && ok "kubeVersion admits Kubernetes $kv_ok" ||
            bad "kubeVersion refuses Kubernetes $kv_ok: $(grep -v 'symbolic link' "$tmp/kv.err")"
    done
    render kv t "$CHART" --kube-version 1.19.16 && bad "kubeVersion admits 1.19.16" ||
        ok "kubeVersion refuses Kubernetes 1.19.16"
else
    not_checked "helm lint / helm template: helm is not on PATH (scripts/install-deps installs it)"
fi
not_checked "rendered manifests against the Kubernetes OpenAPI schemas (no kubeconform/kubectl)"
not_checked "NOTES.txt and _helpers.tpl beyond the .Values keys they use and what they render"

echo "== not checked"
for n in "${notes[@]}"; do echo "  -     $n"; done
echo "lint-charts: $checks checks, $fails failed"
[ $fails = 0 ]
