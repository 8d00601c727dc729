package calico.felix.calc;

/** What an IP set's members are. */
public enum IpSetType {
    /** CIDRs: endpoint addresses (as /32 or /128) and network-set nets. */
    NET,
    /** (address, protocol, port) triples: the named ports of matching endpoints. */
    IP_AND_PORT
}
