"""moto's listing of its backend modules is made once (`dispatch`): the same names in
the same order as the directory's, and the dispatcher finds the same backend for a host
as before, with no filesystem call per request. In-process: no emulator needed."""
import os
import unittest
from unittest import mock

import moto.backends
from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app

from moto_ext import dispatch


class ModulesListedOnce(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.before = {
            host: DomainDispatcherApplication(create_backend_app).get_backend_for_host(host)
            for host in ("s3", "ec2", "moto_api", "cloudformation", "no-such-host", "sts.amazonaws.com")
        }
        dispatch.install()

    def test_the_listing_is_the_directory_listing(self) -> None:
        self.assertEqual(list(moto.backends.list_of_moto_modules()), dispatch.original_listing())
        self.assertIn("s3", moto.backends.list_of_moto_modules())

    def test_a_request_lists_no_directory(self) -> None:
        app = DomainDispatcherApplication(create_backend_app)
        app.get_backend_for_host("s3")
        with mock.patch.object(os, "listdir", side_effect=AssertionError("listed")):
            self.assertEqual(app.get_backend_for_host("s3"), "s3")

    def test_every_host_finds_the_backend_it_found_before(self) -> None:
        app = DomainDispatcherApplication(create_backend_app)
        for host, backend in self.before.items():
            self.assertEqual(app.get_backend_for_host(host), backend, host)

    def test_install_twice_keeps_the_first_original(self) -> None:
        dispatch.install()
        # The original still reads the directory: it fails when listing is refused.
        with mock.patch.object(os, "listdir", side_effect=OSError("listed")):
            self.assertRaises(OSError, dispatch.original_listing)
