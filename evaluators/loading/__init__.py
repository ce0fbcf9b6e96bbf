"""Loading: gold specs, submissions (nested and flat layouts), answer paths, checks shared with validate."""
