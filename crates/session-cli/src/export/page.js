(function(){
'use strict';
// The session travels as one payload (see export_html.rs): a line of tree metadata (JSON),
// then each entry's row, one a line, in node order. Small pages embed it base64-encoded and
// render synchronously; large ones embed deflate-raw chunks (base64, one a line), inflated
// with the browser's DecompressionStream and rendered in batches per animation frame, the
// current branch first. Transcript text only ever reaches the page through textContent.
var D=document,P=D.getElementById('payload'),TREE=D.getElementById('tree');
if(!P||!TREE)return;
var dec=new TextDecoder(),buf=null,meta=null,off=null,nodes=null,byId=null,cont=[],queue=[],bg=[],det=[],rows=[],busy=false,SYNC=P.getAttribute('data-enc')==='base64';
var KIND={thinking_level_change:'thinking',model_change:'model',compaction:'compaction',branch_summary:'branch_summary',custom:'custom',custom_message:'custom_message',label:'label',session_info:'session_info',reset:'reset',leaf:'leaf',message:'message'};
function el(tag,cls,text){var e=D.createElement(tag);if(cls)e.className=cls;if(text!=null)e.textContent=text;return e;}
function b64(s){if(Uint8Array.fromBase64)return Uint8Array.fromBase64(s);var bin=atob(s),n=bin.length,u=new Uint8Array(n);for(var i=0;i<n;i++)u[i]=bin.charCodeAt(i);return u;}
function concat(parts){var n=0,i,o=0;for(i=0;i<parts.length;i++)n+=parts[i].length;var u=new Uint8Array(n);for(i=0;i<parts.length;i++){u.set(parts[i],o);o+=parts[i].length;}return u;}
function inflate(u){var ds=new DecompressionStream('deflate-raw'),w=ds.writable.getWriter();w.write(u).catch(function(){});w.close().catch(function(){});return new Response(ds.readable).arrayBuffer().then(function(b){return new Uint8Array(b);});}
function thousands(n){return String(n).replace(/\B(?=(\d{3})+(?!\d))/g,',');}
function str(v){return v==null?null:(typeof v==='string'?v:JSON.stringify(v));}
function oneLine(s){return s.replace(/\s+/g,' ').trim();}
function excerpt(s,max){s=oneLine(s.length>max*4?s.slice(0,Math.max(max*4,64)):s);var a=Array.from(s);return a.length<=max?s:a.slice(0,max-1).join('')+'…';}
function row(i){if(rows[i]!==undefined)return rows[i];var v=null;try{v=JSON.parse(dec.decode(buf.subarray(off[i],off[i]+nodes[i][8])));}catch(e){v=null;}rows[i]=v;return v;}
function shortOf(id){var i=byId[id];return i===undefined?String(id).slice(0,8):nodes[i][4];}
function contentText(c){if(c==null)return '';if(typeof c==='string')return c;if(!Array.isArray(c))return JSON.stringify(c);var parts=[],thinking=false;c.forEach(function(b){var t=b&&str(b.type)||'';if(t==='text'){var x=str(b.text)||'';if(x.trim())parts.push(x);}else if(t==='thinking')thinking=true;else if(t==='image')parts.push('[image]');else if(t==='toolCall')parts.push(toolCall(b));else if(t==='')parts.push(JSON.stringify(b));else parts.push('['+t+']');});if(!parts.length&&thinking)parts.push('(thinking)');return parts.join(' ');}
function toolCall(b){var n=str(b.name)||'?';return b.arguments==null?'→ '+n+'()':'→ '+n+' '+JSON.stringify(b.arguments);}
function msgText(m){var role=str(m.role)||'message',c=contentText(m.content),t;if(role==='assistant'){var e=str(m.errorMessage),s=str(m.stopReason);t=!c?(e!=null?'('+(s||'error')+': '+e+')':'(no content, '+(s||'no reply')+')'):(e!=null?c+' ⚠ '+e:c);}else if(role==='toolResult'){t=(m.isError===true?'✗ ':'')+(str(m.toolName)||'tool')+': '+c;}else if(role==='bashExecution'){t='$ '+(str(m.command)||'')+(typeof m.exitCode==='number'?' → exit '+m.exitCode:'');}else if(role==='custom'){t=(str(m.customType)||'')+': '+c;}else if(role==='branchSummary'||role==='compactionSummary'){t=str(m.summary)||'';}else t=c;return t||'(empty)';}
function summaryText(i){var n=nodes[i],v=row(i);if(!v)return '(cannot decode)';switch(n[1]){
case 'message':var m=v.message;return m&&typeof m==='object'&&!Array.isArray(m)?msgText(m):(m===undefined?'(no message)':'(invalid message: '+JSON.stringify(m)+')');
case 'thinking_level_change':return str(v.thinkingLevel)||'';
case 'model_change':return (str(v.provider)||'')+'/'+(str(v.modelId)||'');
case 'compaction':case 'branch_summary':return str(v.summary)||'';
case 'custom':return (str(v.customType)||'')+(v.data===undefined?'':' '+JSON.stringify(v.data));
case 'custom_message':return (str(v.customType)||'')+': '+contentText(v.content);
case 'label':var t=shortOf(str(v.targetId)||'');return v.label?t+' → "'+(str(v.label))+'"':t+' → (cleared)';
case 'session_info':return v.name!=null?'name "'+str(v.name).trim()+'"':'name cleared';
default:return JSON.stringify(v);}}
function link(id){var a=el('a');a.href='#e-'+id;a.appendChild(el('code',null,shortOf(id)));return a;}
function pre(cls,text){return el('pre',cls,text);}
function textDiv(t){return el('div','text',t);}
function blocks(c,out){if(c==null)return;if(typeof c==='string'){out.appendChild(textDiv(c));return;}if(!Array.isArray(c)){out.appendChild(pre(null,JSON.stringify(c,null,2)));return;}
c.forEach(function(b){var t=b&&str(b.type);if(t==='text')out.appendChild(textDiv(str(b.text)||''));else if(t==='thinking'){var d=el('details','thinking');d.appendChild(el('summary',null,'thinking'));d.appendChild(textDiv(str(b.thinking)||''));out.appendChild(d);}
else if(t==='toolCall'){var w=el('div','tool-call');w.appendChild(el('span','tool-name','→ '+(str(b.name)||'')));w.appendChild(pre(null,b.arguments==null?'':JSON.stringify(b.arguments,null,2)));out.appendChild(w);}
else if(t==='image'){var mime=str(b.mimeType)||'',data=str(b.data)||'';if(/^image\/[A-Za-z0-9+.\-]+$/.test(mime)&&/^[A-Za-z0-9+\/=\r\n]+$/.test(data)){var img=el('img');img.alt='image';img.src='data:'+mime+';base64,'+data;out.appendChild(img);}else out.appendChild(textDiv('[image]'));}
else out.appendChild(pre(null,JSON.stringify(b,null,2)));});}
function note(parts){var p=el('p','note');parts.forEach(function(x){p.appendChild(typeof x==='string'?D.createTextNode(x):x);});return p;}
function body(i,out){var n=nodes[i],v=row(i);out.appendChild(note(['id ',el('code',null,n[0]),n[3]!=null?' · line '+n[3]:'']));if(!v){out.appendChild(textDiv('(cannot decode)'));return;}
switch(n[1]){case 'message':var m=v.message||{},role=str(m.role);if(role==='toolResult'){var p=note(['result of ',el('code',null,str(m.toolName)||'')]);if(m.isError===true){p.appendChild(D.createTextNode(' — '));p.appendChild(el('strong',null,'error'));}out.appendChild(p);out.appendChild(pre('result',contentPlain(m.content)));}
else if(role==='bashExecution')out.appendChild(pre('result','$ '+(str(m.command)||'')+'\n'+(str(m.output)||'')));
else{if(role==='assistant'&&m.provider!=null&&m.model!=null)out.appendChild(note([str(m.provider)+'/'+str(m.model)]));blocks(m.content,out);if(role==='assistant'&&m.errorMessage!=null)out.appendChild(el('p','error',str(m.errorMessage)));}break;
case 'compaction':out.appendChild(note(['compaction boundary: '+(str(v.tokensBefore)||'')+' tokens before; the context keeps entries from ',v.firstKeptEntryId!=null?link(str(v.firstKeptEntryId)):'?']));out.appendChild(textDiv(str(v.summary)||''));break;
case 'branch_summary':out.appendChild(note(['branch summary (from '+(str(v.fromId)||'')+')']));out.appendChild(textDiv(str(v.summary)||''));break;
case 'custom_message':out.appendChild(note(['custom message ',el('code',null,str(v.customType)||'')]));blocks(v.content,out);break;
case 'label':out.appendChild(note(['label on ',link(str(v.targetId)||''),': '+(v.label!=null?str(v.label):'(cleared)')]));break;
default:out.appendChild(textDiv(summaryText(i)));}
var raw=el('details','raw');raw.appendChild(el('summary',null,'JSON'));raw.appendChild(pre(null,JSON.stringify(v,null,2)));out.appendChild(raw);}
function contentPlain(c){if(typeof c==='string')return c;if(Array.isArray(c))return c.map(function(b){var t=b&&str(b.type);return t==='text'?str(b.text):t==='image'?'[image]':null;}).filter(function(x){return x!=null;}).join('\n');return c==null?'':JSON.stringify(c);}
function entry(i){var n=nodes[i],f=n[6],d=el('div','entry k-'+n[1]+(n[1]==='message'?' r-'+n[2].replace(/ /g,'_'):'')+(f&1?' on-branch':'')+(f&2?' leaf':''));
d.id='e-'+n[0];d.setAttribute('data-id',n[0]);if(n[3]!=null)d.setAttribute('data-line',String(n[3]));
var de=el('details'),s=el('summary');s.appendChild(el('span','id',n[4]));s.appendChild(D.createTextNode(' '));s.appendChild(el('span','kind',n[2]));s.appendChild(D.createTextNode(' '));
var v=row(i);if(v&&v.timestamp!=null){s.appendChild(el('span','time',str(v.timestamp)));s.appendChild(D.createTextNode(' '));}
s.appendChild(el('span','excerpt',excerpt(summaryText(i),160)));if(n[5]!=null)s.appendChild(el('span','badge',n[5]));if(f&2)s.appendChild(el('span','marker','◀ leaf'));
if(n[7].length>1)s.appendChild(el('span','marker bp','◆ '+n[7].length));if(n[1]==='compaction')s.appendChild(el('span','marker cut','✂ compaction'));if(f&4)s.appendChild(el('span','marker cut','⇤ first kept'));
de.appendChild(s);var b=el('div','body');de.appendChild(b);de.addEventListener('toggle',function(){if(de.open&&!b.firstChild)body(i,b);});d.appendChild(de);
// The entry's content is built when it is first opened (a row's text can be large).
rows[i]=undefined;return d;}
// A chain container: a parent element and the next node of its chain to render.
function chain(parent,start){var c={el:parent,next:start};cont[start]=c;return c;}
function kids(list,parent){if(list.length===1){return [chain(parent,list[0])];}
var wrap=el('div','branches'),out=[],n=list.length;list.forEach(function(c,k){var f=nodes[c][6],dd=el('details','branch'+(f&1?' on-branch':''));
var size=meta.size[c];dd.appendChild(el('summary',null,'branch '+(k+1)+' of '+n+' · '+thousands(size)+' '+(size===1?'entry':'entries')+(f&1?' · current':'')+' — '+excerpt(summaryText(c),80)));
rows[c]=undefined;wrap.appendChild(dd);det[c]=dd;var ch=chain(dd,c);if(SYNC||f&1)dd.open=true;
dd.addEventListener('toggle',function(){if(dd.open&&ch.next>=0)fill(ch,Infinity);});out.push(ch);});parent.appendChild(wrap);return out;}
// Renders up to `budget` entries of chain `c`; new chains go to the front queue when open.
function fill(c,budget){var done=0;while(c.next>=0&&done<budget){var i=c.next;c.el.appendChild(entry(i));done++;var k=nodes[i][7];c.next=-1;
if(k.length===1)c.next=k[0];else if(k.length>1)kids(k,c.el).forEach(function(ch){(ch.el.open?queue:bg).push(ch);});}return done;}
function pump(){busy=false;var t0=performance.now();while(performance.now()-t0<12){var c=queue.length?queue[0]:bg[0];if(!c)break;fill(c,200);if(c.next<0)(queue.length?queue:bg).shift();}
if(queue.length||bg.length){busy=true;requestAnimationFrame(pump);}}
function reveal(id){var i=byId[id];if(i===undefined)return;var path=[];for(var j=i;j>=0&&path.length<=nodes.length;j=meta.parent[j])path.push(j);path.reverse();
path.forEach(function(j){if(det[j])det[j].open=true;var c=cont[j];if(c&&c.next>=0)fill(c,Infinity);});
var e=D.getElementById('e-'+id);if(e){var d=e.querySelector('details');if(d)d.open=true;e.scrollIntoView({block:'center'});}}
function hash(){var h=decodeURIComponent(location.hash.slice(1));if(h.slice(0,2)==='e-')reveal(h.slice(2));}
function start(u){buf=u;var nl=buf.indexOf(10);meta=JSON.parse(dec.decode(buf.subarray(0,nl)));nodes=meta.n;byId=Object.create(null);off=new Array(nodes.length);var pos=nl+1;
for(var i=0;i<nodes.length;i++){byId[nodes[i][0]]=i;off[i]=pos;pos+=nodes[i][8]+1;}
var note=D.getElementById('loading');if(note)note.remove();if(!nodes.length){TREE.appendChild(el('p',null,'(no entries)'));return;}
kids(meta.roots,TREE).forEach(function(ch){(SYNC||ch.el===TREE||ch.el.open?queue:bg).push(ch);});
if(SYNC){while(queue.length)fill(queue.shift(),Infinity);}else pump();hash();}
window.addEventListener('hashchange',hash);
D.addEventListener('click',function(ev){var b=ev.target.closest('button[data-act]');if(!b)return;var act=b.getAttribute('data-act');
if(act==='leaf'){var l=D.querySelector('.entry.leaf');if(!l&&meta){var k=nodes.findIndex(function(n){return n[6]&2;});if(k>=0){reveal(nodes[k][0]);return;}}if(l){l.scrollIntoView({block:'center'});var d=l.querySelector('details');if(d)d.open=true;}return;}
var sel=act==='branches-open'||act==='branches-close'?'details.branch':'.entry>details';D.querySelectorAll(sel).forEach(function(d){d.open=(act==='expand'||act==='branches-open');});});
var text=P.textContent.trim();
if(SYNC){start(b64(text));}
else{Promise.all(text.split('\n').map(function(c){return inflate(b64(c));})).then(function(parts){start(concat(parts));}).catch(function(e){var n=D.getElementById('loading');if(n)n.textContent='This page could not unpack its data: '+e;});}
})();
