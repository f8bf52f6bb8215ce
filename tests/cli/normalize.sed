# Replace what changes from run to run (times, rates, paths) before the
# golden comparison.
s/[0-9]+(\.[0-9]+)?(e[-+]?[0-9]+)? ?(s|ms|us)\b/<T>/g
s/"(time_s|seconds|kernel_s)":[-0-9.e+]+/"\1":<T>/g
s/"(h2d|d2h|convert|norms|kernel|sink|join|compute|load)":[-0-9.e+]+/"\1":<T>/g
s/tcjoin-golden-[A-Za-z0-9]+\.db/<DB>/g
