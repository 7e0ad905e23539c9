# The HTML report's tests open it in a real headless browser (Debian's
# chromium) to check that every plot is drawn and no script fails.
need_pkg chromium
