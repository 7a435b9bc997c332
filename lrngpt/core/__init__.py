"""The ground rules every layer stands on: atomic writes and OS errors (fsio), what lrn may replace
(ownership, and its record), the one logger (log), the one value checker (validate).

Words with one meaning each here:

    record      the ownership record, `.lrn-output`: what lrn wrote in a directory, each file's sha256
                (lrngpt.core.ownership); nothing else in lrn is called a record
    owned       a file the record names whose content is still what lrn wrote: lrn may replace it
"""
