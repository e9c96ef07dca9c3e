#!/bin/bash
for f in "$@"; do python3 -c "
import json,sys; d=json.load(open('$f'))
for c in d['cases']: print('$f', 'tcp',round(d['loopbackTcpMBps']), 'tcpcpu',round(d.get('loopbackTcpCpuSecPerGB',0),3), 'size',c['size'],'up',round(c['uploadMBps'],2), 'sync',round(c['syncMBps'],2), 'ratio',round(c['syncOverTcp'],3),'cpu s/r',round(c.get('senderSyncCpuSecPerGB',0),3),round(c.get('receiverSyncCpuSecPerGB',0),3),'cpu/tcp',round(c.get('syncCpuOverTcp',0),2),'read',round(c['readMBps'],1), 'rss',round(c['senderPeakRssMiB']),round(c['receiverPeakRssMiB']))"; done
