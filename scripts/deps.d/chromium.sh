# The HTML report's tests open it in a real headless browser (Debian's
# chromium) to check that every plot is drawn and no script fails.
left_out chromium && return 0
need_pkg chromium
