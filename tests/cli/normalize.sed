# Replace what changes from run to run (times, rates, paths) before the
# golden comparison. The session-log path goes first: its random letters
# can read as a time ("…92cp8s.db") and must not be rewritten as one.
s/tcjoin-golden-[A-Za-z0-9]+\.db/<DB>/g
s/[0-9]+(\.[0-9]+)?(e[-+]?[0-9]+)? ?(s|ms|us)\b/<T>/g
s/"(time_s|seconds|kernel_s)":[-0-9.e+]+/"\1":<T>/g
s/"(h2d|d2h|convert|norms|kernel|sink|join|compute|load)":[-0-9.e+]+/"\1":<T>/g
s/[-0-9.e+]+ TFLOPS/<F> TFLOPS/g
s/[-0-9.e+]+ pairs\/s/<F> pairs\/s/g
s/unpadded [-0-9.e+]+\)/unpadded <F>)/g
s/^(  speedup .*): [-0-9.e+a-z]+x /\1: <F>x /
s/"(tflops|tflops_unpadded|tflops_a|tflops_b|speedup|speedup_kernel|time_a|time_b)":[-0-9.e+]+/"\1":<F>/g
s/[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9.]+Z/<TS>/g
s#/[^ "]*/tests/cli/#<REPO>/tests/cli/#g
s/"variant":"[^"]*"/"variant":<V>/g
s/"(sample_time_s|ref_time_s)":[-0-9.e+]+/"\1":<T>/g
s/"(tree_s|core_s|forest_s|rest_s|select_s)":[-0-9.e+]+/"\1":<T>/g
s/"device":"[^"]*"/"device":<DEV>/g
# show run as text: one "name  value" line per column
s/^(time_s|kernel_s)( +)[-0-9.e+]+$/\1\2<T>/
s/^(tflops|tflops_unpadded)( +)[-0-9.e+]+$/\1\2<F>/
s/^(phase +[a-z0-9_]+ )[-0-9.e+]+$/\1<T>/
s/^device( +).*$/device\1<DEV>/
s/^variant( +).*$/variant\1<V>/
# precisions: the TFLOPS and speed columns after the kernel time, and the
# speed in its closing sentence
s/(<T> +)[0-9.e+-]+( +)([0-9.]+x|-)$/\1<F>\2\3/
s/(<F> +)[0-9]+\.[0-9]+x$/\1<F>x/
s/, [0-9]+\.[0-9]+x ([a-z0-9-]+)'s speed/, <F>x \1's speed/
# precisions: the two fastest formats timed again (within noise or not
# depends on the machine's load)
s/^  timing: .*$/  timing: <TIMING>/
s/"within_noise":[01]/"within_noise":<B>/g
# set threads N beyond this machine's cores: the note depends on the host
/^  note: this machine has [0-9]+ cores; /d
s/,"note":"this machine has [0-9]+ cores; [^"]*"//g
