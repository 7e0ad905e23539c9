# Cassandra 5.0 for the cassandra backend's tests (they start their own
# single node as a foreground `java ... org.apache.cassandra.service.
# CassandraDaemon` on ports of their own). There is no Debian package, and
# Apache's download mirrors may be out of reach, so the node is the
# cassandra-all jar and its runtime dependencies from Maven Central,
# fetched with Maven into /opt/sojourn-cassandra-VERSION/lib (a system
# path, so tests run by another user or HOME find it). It runs on Java 17
# (Cassandra 5.0 supports 11 and 17, not 21): Debian's
# openjdk-17-jre-headless, which the tests find at its Debian path when
# the `java` on PATH is another version.
left_out cassandra && return 0
cassandra_version=5.0.9
cassandra_lib=/opt/sojourn-cassandra-$cassandra_version/lib
cassandra_fetch() {
  local tmp sudo=
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  tmp=$(mktemp -d)
  cat >"$tmp/pom.xml" <<POM
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>local.sojourn</groupId>
  <artifactId>cassandra-jars</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency>
      <groupId>org.apache.cassandra</groupId>
      <artifactId>cassandra-all</artifactId>
      <version>$cassandra_version</version>
    </dependency>
  </dependencies>
</project>
POM
  # Into a directory of its own, then moved into place, so that a failed or
  # interrupted fetch leaves no half-filled lib directory behind.
  if ! mvn -B -q -f "$tmp/pom.xml" \
    org.apache.maven.plugins:maven-dependency-plugin:3.6.1:copy-dependencies \
    -DincludeScope=runtime -DoutputDirectory="$tmp/lib" ||
    ! $sudo mkdir -p "$(dirname "$cassandra_lib")" ||
    ! $sudo rm -rf "$cassandra_lib" ||
    ! $sudo cp -r "$tmp/lib" "$cassandra_lib" ||
    ! $sudo chmod -R a+rX "$(dirname "$cassandra_lib")"; then
    rm -rf "$tmp"
    echo "scripts/deps: could not fetch Cassandra $cassandra_version's jars from Maven Central" \
      "into $cassandra_lib; leave its tests out with SOJOURN_TEST_LEAVE_OUT=cassandra" >&2
    return 1
  fi
  rm -rf "$tmp"
}
[ -x /usr/lib/jvm/java-17-openjdk-amd64/bin/java ] || need_pkg openjdk-17-jre-headless
if [ ! -e "$cassandra_lib/cassandra-all-$cassandra_version.jar" ]; then
  command -v mvn >/dev/null 2>&1 || need_pkg maven
  post+=(cassandra_fetch)
fi
