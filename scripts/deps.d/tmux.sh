# The live dashboard's tests run sojourn in a real terminal (tmux) and read
# the screen back.
left_out tmux && return 0
need_pkg tmux
