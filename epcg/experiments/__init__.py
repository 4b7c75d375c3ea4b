"""The built-in job kinds: each module binds a domain to a search driver and the runtime.

Every module here provides the :class:`~epcg.runtime.registry.JobKind` interface
and is registered in ``pyproject.toml`` under the ``epcg.jobs`` entry-point
group, exactly as a third-party job kind would be. The runtime finds them there;
domains know nothing of them.
"""
