# The Debian package (`cpack` in a build directory; scripts/package.sh):
# the static executable in /usr/bin, the skill assets where it looks for
# them (/usr/share/devgraph, found next to the binary without flags), the
# licence as the package's copyright file and the changelog, gzipped, as
# Debian policy wants them. Man pages and completions are installed by the
# rules that generate them. No maintainer scripts: removing the package
# removes every file it installed, and nothing else is ever written outside
# a user's own directories.

install(FILES ${CMAKE_SOURCE_DIR}/LICENSE DESTINATION ${CMAKE_INSTALL_DOCDIR} RENAME copyright)
set(DEVGRAPH_CHANGELOG_GZ ${CMAKE_BINARY_DIR}/package/changelog.gz)
add_custom_command(
    OUTPUT ${DEVGRAPH_CHANGELOG_GZ}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/package
    # -n: no name or time stamp in the header, so the package is reproducible.
    COMMAND sh -c "gzip -9n < '${CMAKE_SOURCE_DIR}/CHANGELOG.md' > '${DEVGRAPH_CHANGELOG_GZ}'"
    DEPENDS ${CMAKE_SOURCE_DIR}/CHANGELOG.md
    VERBATIM)
add_custom_target(devgraph_changelog ALL DEPENDS ${DEVGRAPH_CHANGELOG_GZ})
install(FILES ${DEVGRAPH_CHANGELOG_GZ} DESTINATION ${CMAKE_INSTALL_DOCDIR})

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME devgraph)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR "The devgraph authors")
set(CPACK_PACKAGE_CONTACT "The devgraph authors")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "autonomous software development run as a persistent graph")
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
    "autonomous software development run as a persistent graph
 devgraph turns a repository's open issues into small bundles and drives
 each through a plan, test-first tasks, verification, review and a pull
 request (or a ready branch), with agent CLIs doing the bounded work inside
 each node. Its state survives any kill: the next run resumes.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_RESOURCE_FILE_LICENSE ${CMAKE_SOURCE_DIR}/LICENSE)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# The executable is static: git is the one program every verb drives. gh
# (GitHub delivery) and chromium (opening the live board) are recommended;
# the agent CLIs (claude, codex, gemini) are npm packages, not Debian's, so
# nodejs and npm are suggested for them.
set(CPACK_DEBIAN_PACKAGE_DEPENDS "git (>= 1:2.30)")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "gh, chromium")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "nodejs, npm")
include(CPack)
